/**
 * The viewer follows the drop live (docs/api.md, "Live pages"), in real headless Chromium, with two instances on one
 * database joined by a real bus: the page is on A, the writes go to B. Each drop is framed on its own origin
 * (`<label>.localhost`), so following works through the content origin.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { type Cluster, call, createCluster } from './instances.js';

let cluster: Cluster;
let browser: Browser;
let owner: string;

beforeAll(async () => {
  cluster = await createCluster({ hostName: 'localhost' });
  owner = await cluster.token('owner');
  browser = await launchBrowser({ partitionedStorage: true });
});
afterAll(async () => {
  await browser?.close();
  await cluster?.close();
});

const viewerBase = () => cluster.config.baseUrl;
const b = () => cluster.at(1);

const styled = (text: string) =>
  `<!doctype html><html><head><title>${text}</title><style>body{font:18px system-ui;padding:24px}</style></head><body><h1>${text}</h1>${'<p>A long report.</p>'.repeat(60)}</body></html>`;

async function publish(extra: Record<string, unknown> = {}): Promise<string> {
  const made = await call(b(), 'POST', '/api/drops', owner, {
    title: 'Weekly report',
    html: styled('First'),
    ...extra,
  });
  expect(made.status).toBe(201);
  return made.json.slug;
}

/** Counts the page's own navigations (a reload would add one). */
function navigations(page: Page): () => number {
  let count = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) count += 1;
  });
  return () => count;
}

/** Resolves once the page's events stream is open (its first bytes arrived). */
async function streamOpen(page: Page, slug: string): Promise<void> {
  await page.waitForResponse((r) => r.url().endsWith(`/p/${slug}/events`) && r.status() === 200);
}

describe('the live viewer', () => {
  it('moves its frame to v2 within a second of a PUT on another instance, without reloading', async () => {
    const slug = await publish();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const loads = navigations(page);
    const opened = streamOpen(page, slug);
    await page.goto(`${viewerBase()}/p/${slug}`);
    await opened;
    const frame = page.frameLocator('#drop-frame');
    await expect.poll(() => frame.locator('h1').textContent()).toBe('First');
    expect(await page.locator('#drop-frame').getAttribute('src')).toMatch(
      /^http:\/\/[a-z0-9]+\.localhost:\d+\/v\/1\/$/,
    );

    const put = await call(b(), 'PUT', `/api/drops/${slug}`, owner, { html: styled('Second') });
    expect(put.status).toBe(200);
    // Within a second of the write, counted from its answer.
    const before = performance.now();
    // Polled from here: a predicate evaluated in the page would need 'unsafe-eval', which the viewer's CSP refuses.
    await expect
      .poll(() => page.locator('#drop-frame').getAttribute('src'), { timeout: 1000, interval: 20 })
      .toMatch(/\/v\/2\/$/);
    expect(performance.now() - before).toBeLessThan(1000);
    await expect.poll(() => frame.locator('h1').textContent()).toBe('Second');
    // The page around it follows: the picker shows v2, and still works.
    await expect.poll(() => page.locator('#version-picker').inputValue()).toBe('2');
    expect(await page.locator('#version-notice').count()).toBe(0);
    expect(loads()).toBe(1);
    await page.screenshot({ path: screenshotPath('live-followed-desktop') });
    await page.close();
  });

  it('shows a notice with a link to the newer version when pinned with ?v=, and keeps its frame', async () => {
    const slug = await publish();
    for (const [name, options] of [
      ['desktop', { viewport: { width: 1280, height: 800 } }],
      ['phone', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
      ['dark', { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const }],
    ] as const) {
      // Without the page's CSP only so axe's script can run (as in comments.browser.test.ts); the other tests keep it.
      const context = await browser.newContext({ ...options, bypassCSP: true });
      const page = await context.newPage();
      const loads = navigations(page);
      const opened = streamOpen(page, slug);
      await page.goto(`${viewerBase()}/p/${slug}?v=1`);
      await opened;
      const latest = (await call(b(), 'GET', `/api/drops/${slug}`, owner)).json.latest_version as number;
      expect((await call(b(), 'PUT', `/api/drops/${slug}`, owner, { html: styled('Newer') })).status).toBe(200);
      const link = page.locator('#latest-link');
      await expect.poll(() => link.textContent(), { timeout: 1000 }).toBe(`version ${latest + 1}`);
      expect(await link.getAttribute('href')).toBe(`/p/${slug}`);
      expect(await page.locator('#version-notice').getAttribute('role')).toBe('status');
      expect(await page.locator('#drop-frame').getAttribute('src')).toMatch(/\/v\/1\/$/);
      expect(loads()).toBe(1);
      const violations = blocking(await axeViolations(page));
      expect(violations, describeViolations(`pinned notice (${name})`, violations)).toEqual([]);
      await page.screenshot({ path: screenshotPath(`live-pinned-notice-${name}`) });
      await context.close();
    }
  });

  it('updates its comments panel live and keeps what the visitor is typing', async () => {
    const slug = await publish({ comments: 'open' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const loads = navigations(page);
    const opened = streamOpen(page, slug);
    await page.goto(`${viewerBase()}/p/${slug}#comments`);
    await opened;
    await page.locator('#c-name').fill('Dana');
    await page.locator('#c-body').fill('half-written thought');
    const made = await call(b(), 'POST', `/api/drops/${slug}/comments`, owner, { body: 'Check the totals' });
    expect(made.status).toBe(201);
    await expect
      .poll(() => page.locator(`[data-comment="${made.json.id}"] .c-body`).textContent(), { timeout: 1500 })
      .toBe('Check the totals');
    expect(await page.locator('#comment-count').textContent()).toBe('1');
    expect(await page.locator('#c-body').inputValue()).toBe('half-written thought');
    expect(await page.locator('#comments-panel').isHidden()).toBe(false);
    // The refresh was not a render: the view count has only the page's own load.
    await b().services.flushCounters();
    await cluster.instances[0]?.services.flushCounters();
    expect((await call(b(), 'GET', `/api/drops/${slug}`, owner)).json.view_count).toBe(1);
    // The toggle still works after the refresh.
    await page.locator('#comments-toggle').click();
    expect(await page.locator('#comments-panel').isHidden()).toBe(true);
    expect(loads()).toBe(1);
    await page.screenshot({ path: screenshotPath('live-comments-desktop') });
    await page.close();
  });
});
