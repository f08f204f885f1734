/**
 * A folder drop in real headless Chromium (docs/api.md, "Many files in one drop"): the document and its stylesheet,
 * image, module script and the JSON that script fetches all load, on the drop's own origin and on the raw folder
 * without one; each version shows its own image; a locked drop's files open only with the frame's grant; another
 * drop's origin reads none of them. Screenshots of the viewer (desktop, phone, dark) land in .artifacts/screenshots.
 */
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solidPng } from '../../../bench/png.mjs';
import { launchBrowser, screenshotPath } from './browser.js';
import type { Harness } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let service: string;
let token: string;

beforeAll(async () => {
  ({ h, base: service } = await serveOnLoopback({
    hostName: 'localhost',
    limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
  }));
  token = await h.token('owner');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Q3 report</title>
<link rel="stylesheet" href="style.css"></head><body><main>
<h1 id="heading">Q3 report</h1>
<img id="chart" src="img/chart.png" alt="Revenue by month">
<table id="rows"><tbody></tbody></table>
<p id="status">loading</p>
<script type="module" src="js/app.js"></script>
</main></body></html>`;

const CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
main{max-width:640px;margin:24px auto;padding:0 16px}h1{color:rgb(0, 90, 160);margin:0 0 12px}
img{display:block;border:1px solid #ccd;margin:0 0 12px;width:100%;max-width:320px;height:auto}
table{border-collapse:collapse}td{border:1px solid #ccd;padding:4px 8px}
@media (prefers-color-scheme: dark){body{background:#12161c;color:#e6e9ee}h1{color:rgb(120, 180, 255)}}`;

const APP = `const rows = await (await fetch(new URL('../data/rows.json', import.meta.url))).json();
const body = document.querySelector('#rows tbody');
for (const [month, value] of rows) {
  const tr = document.createElement('tr');
  tr.innerHTML = '<td></td><td></td>';
  tr.children[0].textContent = month;
  tr.children[1].textContent = String(value);
  body.append(tr);
}
document.querySelector('#status').textContent = 'loaded ' + rows.length + ' rows';`;

const ROWS = JSON.stringify([
  ['July', 120],
  ['August', 135],
  ['September', 160],
]);

/** The folder as the API takes it; the chart differs by version (its width tells which one loaded). */
const files = (chart: Buffer) => ({
  'style.css': { content: CSS },
  'img/chart.png': { content: chart.toString('base64'), encoding: 'base64' },
  'js/app.js': { content: APP },
  'data/rows.json': { content: ROWS },
});
const V1_CHART = solidPng(40, 20, [200, 40, 40]);
const V2_CHART = solidPng(60, 30, [40, 90, 200]);

interface Published {
  readonly slug: string;
  readonly content_url: string | null;
}

/** A drop with the folder as v1 and v2 (each its own chart), on `harness`. */
async function publishFolder(harness: Harness, body: Record<string, unknown> = {}): Promise<Published> {
  const owner = await harness.token('owner');
  const created = await harness.call('POST', '/api/drops', {
    token: owner,
    body: { title: 'Q3 report', html: HTML, files: files(V1_CHART), ...body },
  });
  expect(created.status, created.text).toBe(201);
  const put = await harness.call('PUT', `/api/drops/${created.json.slug}`, {
    token: owner,
    body: { html: HTML, files: files(V2_CHART) },
  });
  expect(put.status, put.text).toBe(200);
  return created.json;
}

/** Every response the page's frames got that is not a success, as `<status> <url>`. */
function failures(page: Page): string[] {
  const failed: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => failed.push(`failed ${request.url()}: ${request.failure()?.errorText}`));
  return failed;
}

/** The drop's frame once its script has loaded the rows. */
async function loadedFrame(page: Page): Promise<Frame> {
  const frame = await (await page.waitForSelector('#drop-frame')).contentFrame();
  if (frame === null) throw new Error('no drop frame');
  await expect.poll(() => frame.locator('#status').textContent(), { timeout: 10_000 }).toBe('loaded 3 rows');
  return frame;
}

/** What the frame shows: the chart's width (which version's image), the heading's colour (the stylesheet), rows. */
async function shown(frame: Frame) {
  await expect.poll(() => frame.evaluate('document.querySelector("#chart").naturalWidth')).toBeGreaterThan(0);
  return {
    chartWidth: await frame.evaluate('document.querySelector("#chart").naturalWidth'),
    headingColor: await frame.evaluate('getComputedStyle(document.querySelector("#heading")).color'),
    rows: await frame.locator('#rows td').allTextContents(),
  };
}

const ROW_CELLS = ['July', '120', 'August', '135', 'September', '160'];

async function viewerAt(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const failed = failures(page);
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return { page, failed, frame: await loadedFrame(page) };
}

describe('a folder drop on its own origin', () => {
  it('renders with every asset, each version with its own image', async () => {
    const drop = await publishFolder(h);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const latest = await viewerAt(context, `${service}/p/${drop.slug}`);
    expect(await latest.page.locator('#drop-frame').getAttribute('src')).toBe(`${drop.content_url}v/2/`);
    expect(await shown(latest.frame)).toEqual({ chartWidth: 60, headingColor: 'rgb(0, 90, 160)', rows: ROW_CELLS });
    expect(latest.failed).toEqual([]);
    await latest.page.screenshot({ path: screenshotPath('files-viewer-desktop') });
    const first = await viewerAt(context, `${service}/p/${drop.slug}?v=1`);
    expect(await first.page.locator('#drop-frame').getAttribute('src')).toBe(`${drop.content_url}v/1/`);
    expect(await shown(first.frame)).toEqual({ chartWidth: 40, headingColor: 'rgb(0, 90, 160)', rows: ROW_CELLS });
    expect(first.failed).toEqual([]);
    await context.close();

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    const dark = await viewerAt(phone, `${service}/p/${drop.slug}`);
    expect((await shown(dark.frame)).headingColor).toBe('rgb(120, 180, 255)');
    await dark.page.screenshot({ path: screenshotPath('files-viewer-phone-dark') });
    await phone.close();
  });

  it('loads its own files under a network policy of none, and nothing from elsewhere', async () => {
    const drop = await publishFolder(h, { network: 'none' });
    const context = await browser.newContext();
    const { frame, failed } = await viewerAt(context, `${service}/p/${drop.slug}`);
    expect((await shown(frame)).chartWidth).toBe(60);
    expect(failed).toEqual([]);
    const outside = await frame.evaluate(
      (url) =>
        fetch(url).then(
          () => 'loaded',
          () => 'refused',
        ),
      `${service}/llms.txt`,
    );
    expect(outside).toBe('refused');
    await context.close();
  });

  it('a locked drop’s files open with the frame’s grant only; another drop’s origin reads none of them', async () => {
    const locked = await publishFolder(h, { passcode: 'open sesame' });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service}/p/${locked.slug}`);
    await page.locator('#passcode').fill('open sesame');
    await Promise.all([page.waitForURL(`${service}/p/${locked.slug}`), page.locator('#unlock').click()]);
    const frame = await loadedFrame(page);
    expect((await shown(frame)).chartWidth).toBe(60);
    expect(await page.locator('#drop-frame').getAttribute('src')).toMatch(/\/~[^/]+\/v\/2\/$/);
    // The same file without the grant, in a tab of its own: refused, not a byte of it.
    const bare = await context.newPage();
    const refused = await bare.goto(`${locked.content_url}img/chart.png`);
    expect(refused?.status()).toBe(401);
    expect((await refused?.body())?.includes(V2_CHART.subarray(16, 64))).toBe(false);
    await bare.close();

    // Another drop, on its own origin, tries to read an open drop's files: CORS and CORP refuse both ways.
    const open = await publishFolder(h);
    const other = await h.call('POST', '/api/drops', {
      token,
      body: { title: 'Nosy', html: '<!doctype html><title>nosy</title><p id="p">nosy</p>' },
    });
    const nosy = await context.newPage();
    await nosy.goto(other.json.content_url);
    const target = `${open.content_url}img/chart.png`;
    // A string, evaluated in the page: the tests' own code has no DOM types.
    const attempts = await nosy.evaluate(`(async (url) => {
      const read = await fetch(url).then(() => 'read', () => 'refused');
      const image = await new Promise((resolve) => {
        const img = document.createElement('img');
        img.onload = () => resolve('loaded');
        img.onerror = () => resolve('blocked');
        img.src = url;
      });
      return { read, image };
    })(${JSON.stringify(target)})`);
    expect(attempts).toEqual({ read: 'refused', image: 'blocked' });
    await context.close();
  });
});

describe('a folder drop without a content origin', () => {
  it('renders from the raw folder under the opaque sandbox, module script and fetch included', async () => {
    const off = await serveOnLoopback({
      hostName: 'localhost',
      env: { HTMLDROP_CONTENT_ORIGIN: 'off' },
      limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
    });
    try {
      const drop = await publishFolder(off.h);
      expect(drop.content_url).toBeNull();
      const context = await browser.newContext();
      const { page, frame, failed } = await viewerAt(context, `${off.base}/p/${drop.slug}?v=1`);
      expect(await page.locator('#drop-frame').getAttribute('src')).toBe(`/p/${drop.slug}/raw/v/1/`);
      expect(await frame.evaluate('self.origin')).toBe('null');
      expect(await shown(frame)).toEqual({ chartWidth: 40, headingColor: 'rgb(0, 90, 160)', rows: ROW_CELLS });
      expect(failed).toEqual([]);
      expect(await page.locator('#raw-link').getAttribute('href')).toBe(`/p/${drop.slug}/raw/v/1/`);
      await context.close();
    } finally {
      await off.h.close();
    }
  });
});
