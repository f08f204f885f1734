/**
 * Each drop on its own origin, in real headless Chromium (docs/api.md, "Each drop on its own origin"), continued
 * from own-origin.browser.test.ts (which explains the set-up and the `partitionedStorage` launch flag): a locked
 * drop on its content host and its frame tickets, the per-drop network policy, and HTMLDROP_CONTENT_ORIGIN=off.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './browser.js';
import { createHarness, type Harness } from './helpers.js';
import { freePort } from './process.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let service: string;
let token: string;
let counter: http.Server;
/** Requests the counting server got, by path. */
const hits = new Map<string, number>();

beforeAll(async () => {
  counter = http.createServer((request, response) => {
    hits.set(request.url ?? '', (hits.get(request.url ?? '') ?? 0) + 1);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('counted');
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  ({ h, base: service } = await serveOnLoopback({
    hostName: 'localhost',
    limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
  }));
  token = await h.token('owner');
  browser = await launchBrowser({ partitionedStorage: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  counter?.close();
});

interface Published {
  readonly slug: string;
  readonly content_url: string | null;
}

async function publish(harness: Harness, body: Record<string, unknown>): Promise<Published> {
  const reply = await harness.call('POST', '/api/drops', { token: await harness.token('owner'), body });
  expect(reply.status, reply.text).toBe(201);
  return reply.json;
}

/** A GET from Node to a content host: to 127.0.0.1 with the content host's Host header (Node does not resolve *.localhost). */
function getOnHost(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host, ...headers },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
  });
}

async function dropFrame(page: Page, contentUrl: string): Promise<Frame> {
  const frame = await (await page.waitForSelector('#drop-frame')).contentFrame();
  if (frame === null) throw new Error('no drop frame');
  await expect.poll(() => frame.url()).toMatch(new RegExp(`^${new URL(contentUrl).origin}/`));
  await frame.waitForLoadState('load');
  return frame;
}

const SECRET = 'quarterly-secret-figures';
const LOCKED = `<!doctype html><html><head><title>${SECRET}</title></head><body><h1 id="heading">${SECRET}</h1></body></html>`;

describe('a locked drop on its own origin', () => {
  it('gives no byte of the drop without a capability, to Node or to Chromium', async () => {
    const drop = await publish(h, { title: 'Locked', html: LOCKED, passcode: 'open sesame' });
    const url = drop.content_url ?? '';
    for (const path of ['', '?v=1', '?v=1&cap=', '?cap=1z.bogus', '?v=1&cap=zzzzzzzz.AAAA']) {
      const answer = await getOnHost(`${url}${path}`);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.body, path).not.toContain(SECRET);
    }
    // The owner's token opens it (the check above is not vacuous).
    expect((await getOnHost(url, { authorization: `Bearer ${token}` })).body).toContain(SECRET);
    const page = await browser.newPage();
    const response = await page.goto(url);
    expect(response?.status()).toBeGreaterThanOrEqual(400);
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.locator('h1').textContent()).toBe('Passcode required');
    await page.close();
  });

  it('renders in the viewer after the passcode; a changed passcode ends its frame ticket and the viewer re-gates', async () => {
    const drop = await publish(h, { title: 'Locked', html: LOCKED, passcode: 'open sesame' });
    const url = drop.content_url ?? '';
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service}/p/${drop.slug}`);
    await page.locator('#passcode').fill('open sesame');
    await Promise.all([page.waitForURL(`${service}/p/${drop.slug}`), page.locator('#unlock').click()]);
    const frame = await dropFrame(page, url);
    expect(await frame.locator('#heading').textContent()).toBe(SECRET);
    const ticketed = (await page.locator('#drop-frame').getAttribute('src')) ?? '';
    // The ticket goes first in the path, so the document's relative URLs carry it (docs/api.md, "Serving them").
    expect(ticketed).toMatch(new RegExp(`^${url}~[0-9a-z]+\\.[\\w-]+/v/1/$`));
    expect((await getOnHost(ticketed)).body).toContain(SECRET);

    const changed = await h.call('POST', `/api/drops/${drop.slug}/passcode`, {
      token,
      body: { passcode: 'a new passcode' },
    });
    expect(changed.status, changed.text).toBe(200);
    const after = await getOnHost(ticketed);
    expect(after.status).toBeGreaterThanOrEqual(400);
    expect(after.body).not.toContain(SECRET);
    const copied = await context.newPage();
    await copied.goto(ticketed);
    expect(await copied.content()).not.toContain(SECRET);
    await copied.close();

    // A reload inside the frame finds the ticket lapsed: the locked page tells the viewer, which reloads to its gate.
    await Promise.all([page.waitForURL(`${service}/p/${drop.slug}`), frame.evaluate('location.reload()')]);
    await expect.poll(() => page.locator('#passcode').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.locator('#drop-frame').count()).toBe(0);
    await context.close();
  });
});

describe('the network policy', () => {
  /** A drop that loads an image and fetches from the counting server, then says so. */
  const loader = (tag: string) => {
    const target = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    return `<!doctype html><html><head><title>${tag}</title></head><body><img id="pic" src="${target}/img-${tag}" alt="">
<pre id="out">pending</pre><script>
const fetched = fetch('${target}/fetch-${tag}', { mode: 'no-cors' }).then(() => 'answered', () => 'refused');
const loaded = new Promise((resolve) => addEventListener('load', resolve));
Promise.all([fetched, loaded]).then(([fetch]) => { document.getElementById('out').textContent = fetch; });
</script></body></html>`;
  };

  it.each([
    { policy: 'none', tag: 'none', gets: 'no request' },
    { policy: 'open', tag: 'open', gets: 'its requests' },
    { policy: 'an allow-list with its origin', tag: 'listed', gets: 'its requests' },
    { policy: 'an allow-list without it', tag: 'unlisted', gets: 'no request' },
  ])('$policy: the other server gets $gets', async ({ tag }) => {
    const serverOrigin = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    const network = { none: 'none', open: 'open', listed: [serverOrigin], unlisted: ['http://127.0.0.1:1'] }[tag];
    const drop = await publish(h, { title: tag, html: loader(tag), network });
    const page = await browser.newPage();
    await page.goto(`${service}/p/${drop.slug}`);
    const frame = await dropFrame(page, drop.content_url ?? '');
    await expect.poll(() => frame.locator('#out').textContent()).not.toBe('pending');
    const allowed = tag === 'open' || tag === 'listed';
    expect(await frame.locator('#out').textContent()).toBe(allowed ? 'answered' : 'refused');
    expect((hits.get(`/img-${tag}`) ?? 0) > 0, 'the <img> reached the server').toBe(allowed);
    expect((hits.get(`/fetch-${tag}`) ?? 0) > 0, 'the fetch reached the server').toBe(allowed);
    await page.close();
  });
});

describe('HTMLDROP_CONTENT_ORIGIN=off', () => {
  it('frames /p/<slug>/raw in an opaque origin, without allow-same-origin', async () => {
    const port = await freePort();
    const off = await createHarness({
      env: { HTMLDROP_BASE_URL: `http://localhost:${port}`, HTMLDROP_CONTENT_ORIGIN: 'off' },
    });
    try {
      await off.app.listen({ port, host: '127.0.0.1' });
      const drop = await publish(off, {
        title: 'Plain',
        html: '<!doctype html><title>plain</title><p id="p">plain</p>',
      });
      expect(drop.content_url).toBeNull();
      const page = await browser.newPage();
      await page.goto(`http://localhost:${port}/p/${drop.slug}`);
      const iframe = page.locator('#drop-frame');
      expect(await iframe.getAttribute('src')).toBe(`/p/${drop.slug}/raw/v/1/`);
      expect((await iframe.getAttribute('sandbox'))?.split(' ')).not.toContain('allow-same-origin');
      const frame = await (await iframe.elementHandle())?.contentFrame();
      await expect.poll(() => frame?.locator('#p').textContent()).toBe('plain');
      expect(await frame?.evaluate('self.origin')).toBe('null');
      await page.close();
    } finally {
      await off.close();
    }
  });
});
