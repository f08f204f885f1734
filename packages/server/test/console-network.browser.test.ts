/**
 * The drop page's own-origin link and network control in real Chromium (docs/console.md; docs/api.md, "Each drop on
 * its own origin"): the origins field shown only for "Only these origins", saved as the API then reports it, the
 * link opening the drop on its own origin in a new tab, axe-core and screenshots on desktop, phone and dark.
 */
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { page as doc, type Harness } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let base: string;
let token: string;
let slug: string;
let state: Awaited<ReturnType<BrowserContext['storageState']>>;

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const LOOKS: Record<string, BrowserContextOptions> = {
  desktop: DESKTOP,
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  dark: { ...DESKTOP, colorScheme: 'dark' },
};

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback());
  browser = await launchBrowser();
  token = await h.token('nell');
  const created = await h.call('POST', '/api/drops', { token, body: { title: 'Chart', html: doc('Chart') } });
  slug = created.json.slug;
  const context = await browser.newContext();
  const p = await context.newPage();
  await p.goto(`${base}/console/login?next=${encodeURIComponent(`/console/drops/${slug}`)}`);
  await p.locator('#username').fill('nell');
  await Promise.all([p.waitForURL(`${base}/console/drops/${slug}`), p.locator('#local-sign-in').click()]);
  state = await context.storageState();
  await context.close();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the network control and the own origin on the drop page', () => {
  it('shows the origins only for "Only these origins", saves them, and opens the own origin in a new tab', async () => {
    const context = await browser.newContext({ ...DESKTOP, storageState: state });
    const p = await context.newPage();
    await p.goto(`${base}/console/drops/${slug}`);
    expect(await p.locator('#network-origins').isVisible()).toBe(false);
    await p.locator('#network').focus();
    await p.keyboard.press('ArrowDown');
    await p.keyboard.press('ArrowDown');
    expect(await p.locator('#network').inputValue()).toBe('list');
    await p.keyboard.press('Tab');
    expect(await p.evaluate<string>('document.activeElement?.id ?? ""')).toBe('network-origins');
    await p.keyboard.type('https://cdn.jsdelivr.net\nhttps://unpkg.com');
    await Promise.all([p.waitForURL(/done=saved/), p.locator('#save-details').click()]);
    const drop = (await h.call('GET', `/api/drops/${slug}`, { token })).json;
    expect(drop.network).toEqual(['https://cdn.jsdelivr.net', 'https://unpkg.com']);
    expect(await p.locator('#network-origins').isVisible()).toBe(true);

    const link = p.locator('#own-origin-link');
    expect(await link.getAttribute('href')).toBe(drop.content_url);
    const [opened] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await opened.waitForLoadState();
    expect(opened.url()).toBe(drop.content_url);
    expect(await opened.locator('p').first().textContent()).toBe('Chart');
    await context.close();
  });

  it('has no serious or critical axe violation, and screenshots show it on desktop, phone and dark', async () => {
    const network = ['https://cdn.jsdelivr.net', 'https://unpkg.com'];
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { network } })).status).toBe(200);
    const failures: string[] = [];
    for (const [name, options] of Object.entries(LOOKS)) {
      const context = await browser.newContext({ ...options, storageState: state });
      const p = await context.newPage();
      await p.goto(`${base}/console/drops/${slug}`);
      await p.screenshot({ path: screenshotPath(`console-network-${name}`), fullPage: true });
      const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await context.close();
      const checked = await browser.newContext({ ...options, storageState: state, bypassCSP: true });
      const a = await checked.newPage();
      await a.goto(`${base}/console/drops/${slug}`);
      const serious = blocking(await axeViolations(a));
      if (serious.length > 0) failures.push(describeViolations(name, serious));
      await checked.close();
    }
    expect(failures.join('\n'), failures.join('\n')).toBe('');
  });
});
