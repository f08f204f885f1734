/** The public viewer in real headless Chromium: rendering, version picker, context, passcode gate, isolation. */
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshotPath } from './browser.js';
import { createHarness, type Harness } from './helpers.js';

let h: Harness;
let browser: Browser;
let base: string;
let token: string;

/** A drop that reports what its own script can see. */
const PROBE = `<!doctype html><html><head><title>probe</title></head><body>
<h1 id="heading">Quarterly numbers</h1><pre id="out">pending</pre>
<script>
  let cookie; try { cookie = document.cookie; } catch (e) { cookie = 'blocked:' + e.name; }
  let parentTitle; try { parentTitle = parent.document.title; } catch (e) { parentTitle = 'blocked:' + e.name; }
  let storage; try { localStorage.setItem('x', '1'); storage = 'usable'; } catch (e) { storage = 'blocked:' + e.name; }
  document.getElementById('out').textContent = JSON.stringify({ origin: self.origin, cookie, parentTitle, storage });
</script></body></html>`;

const plain = (text: string) =>
  `<!doctype html><html><head><title>${text}</title><style>body{font:18px system-ui;padding:24px;background:#fef6e4}</style></head><body><h1>${text}</h1><p>${'A wide table follows. '.repeat(8)}</p><table><tr>${'<td>cell</td>'.repeat(40)}</tr></table></body></html>`;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  token = await h.token('browser');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function publish(body: Record<string, unknown>) {
  const reply = await h.call('POST', '/api/drops', { token, body: { title: 'Probe', ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.slug as string;
}

async function probeResult(page: Page) {
  const frame = page.frameLocator('iframe');
  await expect.poll(async () => frame.locator('#out').textContent(), { timeout: 10_000 }).not.toBe('pending');
  return JSON.parse((await frame.locator('#out').textContent()) ?? '{}');
}

describe('viewer in Chromium', () => {
  it('renders the drop in an opaque-origin sandbox that cannot read cookies, storage or the viewer', async () => {
    const slug = await publish({ html: PROBE, title: 'Quarterly numbers', description: 'Q3, first cut' });
    const context = await browser.newContext();
    await context.addCookies([{ name: 'viewer_secret', value: 's3cret', url: base }]);
    const page = await context.newPage();
    const response = await page.goto(`${base}/p/${slug}`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toContain('Quarterly numbers');
    await expect.poll(() => page.frameLocator('iframe').locator('#heading').textContent()).toBe('Quarterly numbers');
    const seen = await probeResult(page);
    expect(seen.origin).toBe('null');
    expect(seen.cookie).toMatch(/^blocked:|^$/);
    expect(JSON.stringify(seen)).not.toContain('s3cret');
    expect(seen.parentTitle).toMatch(/^blocked:/);
    expect(seen.storage).toMatch(/^blocked:/);
    const sandbox = await page.locator('iframe').getAttribute('sandbox');
    expect(sandbox).toContain('allow-scripts');
    expect(sandbox).not.toContain('allow-same-origin');
    await context.close();
  });

  it('switches versions with the picker, shows the not-latest notice and reveals context with the toggle', async () => {
    const slug = await publish({
      html: plain('First version'),
      context: 'I chose a table because the data is tabular.',
    });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: plain('Second version') } });
    const page = await browser.newPage();
    await page.goto(`${base}/p/${slug}`);
    await expect.poll(() => page.frameLocator('iframe').locator('h1').textContent()).toBe('Second version');
    expect(await page.locator('#context-toggle').count()).toBe(0);
    expect(await page.locator('#latest-link').count()).toBe(0);

    await Promise.all([page.waitForURL(/\?v=1$/), page.locator('#version-picker').selectOption('1')]);
    await expect.poll(() => page.frameLocator('iframe').locator('h1').textContent()).toBe('First version');
    expect(await page.locator('#latest-link').isVisible()).toBe(true);
    expect(await page.locator('#context-panel').isVisible()).toBe(false);
    await page.locator('#context-toggle').click();
    expect(await page.locator('#context-panel').isVisible()).toBe(true);
    expect(await page.locator('#context-panel').textContent()).toContain('the data is tabular');
    await page.screenshot({ path: screenshotPath('viewer-desktop-old-version-context') });

    await Promise.all([page.waitForURL(new RegExp(`/p/${slug}$`)), page.locator('#latest-link').click()]);
    await expect.poll(() => page.frameLocator('iframe').locator('h1').textContent()).toBe('Second version');
    await page.close();
  });

  it('gates a locked drop: the form, a refused wrong passcode, then the drop inside the iframe', async () => {
    const slug = await publish({ html: PROBE, passcode: 'open sesame', title: 'Locked report' });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/p/${slug}`);
    expect(await page.locator('#passcode').isVisible()).toBe(true);
    expect(await page.locator('iframe').count()).toBe(0);
    expect(await page.content()).not.toContain('Quarterly numbers');
    await page.screenshot({ path: screenshotPath('gate-desktop') });

    await page.locator('#passcode').fill('wrong guess');
    await Promise.all([page.waitForLoadState('load'), page.locator('#unlock').click()]);
    await expect.poll(() => page.locator('#gate-error').isVisible()).toBe(true);
    expect(await page.locator('iframe').count()).toBe(0);

    await page.locator('#passcode').fill('open sesame');
    await Promise.all([page.waitForURL(new RegExp(`/p/${slug}$`)), page.locator('#unlock').click()]);
    const seen = await probeResult(page);
    expect(seen.origin).toBe('null');
    const cookies = await context.cookies(`${base}/p/${slug}`);
    expect(cookies.find((c) => c.name === 'hd_cap')).toMatchObject({ httpOnly: true, path: `/p/${slug}` });
    expect(JSON.stringify(seen)).not.toContain(cookies.find((c) => c.name === 'hd_cap')?.value ?? '###');
    // The Raw link opens the drop in a new tab through the cookie, with no capability in its URL.
    expect(await page.locator('#raw-link').getAttribute('href')).not.toContain('cap=');
    const [tab] = await Promise.all([context.waitForEvent('page'), page.locator('#raw-link').click()]);
    await tab.waitForLoadState('load');
    expect(await tab.locator('#heading').textContent()).toBe('Quarterly numbers');
    await context.close();
  });

  it("refuses a passcode posted by a drop's script to another drop's gate, and plants no capability", async () => {
    const locked = await publish({ html: PROBE, passcode: 'open sesame', title: 'Locked report' });
    // Served by the same host, but sandboxed (opaque origin): Chromium reports its form post as cross-site.
    const attacker = await publish({
      title: 'Innocent page',
      html: `<!doctype html><html><head><title>innocent</title></head><body><form id="f" method="post" action="/p/${locked}/unlock"><input name="passcode" value="open sesame"></form><script>document.getElementById('f').submit();</script></body></html>`,
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const answer = page.waitForResponse((r) => r.url().endsWith(`/p/${locked}/unlock`));
    await page.goto(`${base}/p/${attacker}/raw`);
    const refused = await answer;
    expect(refused.status()).toBe(403);
    expect(await refused.request().headerValue('sec-fetch-site')).toBe('cross-site');
    expect(await context.cookies(`${base}/p/${locked}`)).toEqual([]);
    // The visitor's own attempts are untouched and the gate still works from its own page.
    await page.goto(`${base}/p/${locked}`);
    await page.locator('#passcode').fill('open sesame');
    await Promise.all([page.waitForURL(new RegExp(`/p/${locked}$`)), page.locator('#unlock').click()]);
    expect((await probeResult(page)).origin).toBe('null');
    await context.close();
  });

  it('looks right at phone width (screenshot) and has no horizontal overflow', async () => {
    const slug = await publish({
      html: plain('On a phone'),
      description: 'A description that is a little longer than the width of a phone screen allows.',
      context: 'Context for phones.',
    });
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await page.goto(`${base}/p/${slug}`);
    await expect.poll(() => page.frameLocator('iframe').locator('h1').textContent()).toBe('On a phone');
    // Runs in the page: the string form keeps DOM types out of this Node-only project.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    const frameBox = await page.locator('iframe').boundingBox();
    expect(frameBox?.width).toBeGreaterThanOrEqual(380);
    expect(frameBox?.height).toBeGreaterThan(500);
    await page.screenshot({ path: screenshotPath('viewer-phone') });
    await page.goto(`${base}/p/NoSuchDrop`);
    await page.screenshot({ path: screenshotPath('not-found-phone') });
    await context.close();
  });
});

describe('raw documents in Chromium', () => {
  // docs/api.md 4.6: the additions go at the end of the head, which is created when the document has none; the
  // browser's tree is otherwise the document's own.
  it.each([
    ['no head at all', '<!doctype html><p id="x">body text</p>'],
    [
      'head elements without a <head> tag',
      '<!doctype html><meta charset="utf-8"><title>T</title><p id="x">body text</p>',
    ],
    ['text only', 'body text'],
  ])('%s: the style and viewport land in the head, the body is untouched', async (_name, html) => {
    const slug = await publish({ html });
    const page = await browser.newPage();
    await page.goto(`${base}/p/${slug}/raw`);
    const seen = await page.evaluate<{ head: string[]; body: string; heads: number }>(`({
      head: [...document.head.children].map((e) => e.tagName.toLowerCase() + (e.getAttribute('name') ? ':' + e.getAttribute('name') : '')),
      body: document.body.textContent,
      heads: document.getElementsByTagName('head').length,
    })`);
    expect(seen.heads).toBe(1);
    expect(seen.head.slice(-2)).toEqual(['meta:viewport', 'style']);
    expect(seen.body).toBe('body text');
    await page.close();
  });
});
