/**
 * The Sharing panel of the console's drop page in real Chromium (docs/console.md, "Sharing"): choosing who can see
 * the drop with the keyboard, listing people, making a link whose URL is shown once with a copy button, its view and
 * the log, axe-core and screenshots (the panel) on desktop, phone and dark.
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
  const created = await h.call('POST', '/api/drops', { token, body: { title: 'Board pack', html: doc('Board') } });
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

describe('the Sharing panel', () => {
  it('keeps the drop to listed people, makes a link shown once, and shows its view in the log', async () => {
    const context = await browser.newContext({ ...DESKTOP, storageState: state });
    const p = await context.newPage();
    await p.goto(`${base}/console/drops/${slug}`);
    await p.locator('#visibility').selectOption('people');
    await p.locator('#allow').fill('dana@client.example\n@board.example');
    await Promise.all([p.waitForURL(/done=sharing/), p.locator('#save-sharing').click()]);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      visibility: 'people',
      allow: ['dana@client.example', '@board.example'],
    });
    await p.locator('#link-label').fill('Dana');
    await Promise.all([p.waitForLoadState(), p.locator('#create-link').click()]);
    const url = ((await p.locator('#new-link').textContent()) ?? '').trim();
    expect(url).toMatch(new RegExp(`^${base}/p/${slug}\\?k=`));
    expect(await p.locator('button[data-copy="new-link"]').isVisible()).toBe(true);

    const visitor = await browser.newContext();
    const v = await visitor.newPage();
    expect((await v.goto(url))?.status()).toBe(200);
    expect((await v.goto(`${base}/p/${slug}/raw`))?.status()).toBe(200);
    await visitor.close();
    const stranger = await browser.newContext();
    expect((await (await stranger.newPage()).goto(`${base}/p/${slug}`))?.status()).toBe(401);
    await stranger.close();

    await p.goto(`${base}/console/drops/${slug}`);
    expect(await p.locator('#link-list').textContent()).toContain('Dana');
    expect(await p.locator('#access-log').textContent()).toContain('link “Dana”');
    expect(await p.content()).not.toContain(url);
    await context.close();
  });

  it('has no serious or critical axe violation, and screenshots show it on desktop, phone and dark', async () => {
    const failures: string[] = [];
    for (const [name, options] of Object.entries(LOOKS)) {
      const context = await browser.newContext({ ...options, storageState: state });
      const p = await context.newPage();
      await p.goto(`${base}/console/drops/${slug}#sharing`);
      await p.locator('#sharing').screenshot({ path: screenshotPath(`console-sharing-${name}`) });
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
