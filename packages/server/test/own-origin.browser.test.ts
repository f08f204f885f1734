/**
 * Each drop on its own origin, in real headless Chromium (docs/api.md, "Each drop on its own origin"): the service
 * is `http://localhost:<port>` and each drop `http://<label>.localhost:<port>`, which Chromium resolves to loopback
 * by itself, so the viewer and its drops are different sites as in a real deployment. Open drops here; locked
 * drops, the network policy and HTMLDROP_CONTENT_ORIGIN=off are in own-origin-locked.browser.test.ts.
 *
 * The trap: Playwright launches Chromium with `--disable-features=...,ThirdPartyStoragePartitioning,...`. With that
 * feature off, Chromium refuses localStorage in every cross-site iframe, even with allow-same-origin, so the design
 * looks broken under Playwright's defaults while it works in the browsers people use (which partition third-party
 * storage by top-level site). These tests launch with Playwright's list minus that feature (`partitionedStorage`,
 * test/browser.ts). Third-party cookies on plain-http loopback stay blocked; nothing here relies on them.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContentLabel } from '../src/domain/content-origin.js';
import { launchBrowser, PLAYWRIGHT_DISABLED_FEATURES, screenshotPath } from './browser.js';
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
  browser = await launchBrowser({ partitionedStorage: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface Published {
  readonly slug: string;
  readonly content_url: string;
}

async function publish(title: string, html: string): Promise<Published> {
  const reply = await h.call('POST', '/api/drops', { token, body: { title, html } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json;
}

const origin = (drop: Published) => new URL(drop.content_url).origin;

/** The viewer's drop frame, once its document (on the drop's own origin) has loaded. */
async function dropFrame(page: Page, drop: Published): Promise<Frame> {
  const frame = await (await page.waitForSelector('#drop-frame')).contentFrame();
  if (frame === null) throw new Error('no drop frame');
  await expect.poll(() => frame.url()).toMatch(new RegExp(`^${origin(drop)}/`));
  await frame.waitForLoadState('load');
  return frame;
}

async function openInViewer(context: BrowserContext, drop: Published): Promise<{ page: Page; frame: Frame }> {
  const page = await context.newPage();
  const response = await page.goto(`${service}/p/${drop.slug}`);
  expect(response?.status()).toBe(200);
  return { page, frame: await dropFrame(page, drop) };
}

const TODO = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>To-do</title><style>
body{font:16px/1.5 system-ui,sans-serif;color:#1d2430}main{max-width:560px;margin:32px auto;padding:0 16px}
form{display:flex;gap:8px}input{flex:1;font:inherit;padding:8px 10px;border:1px solid #c8cdd6;border-radius:8px}
button{font:inherit;padding:8px 14px;border:0;border-radius:8px;background:#3758f9;color:#fff}
li{padding:8px 0;border-bottom:1px solid #e4e7ec}#note{color:#9f1d1d}</style></head><body>
<main><h1>To-do</h1><form id="add"><input id="item" aria-label="New item" placeholder="What needs doing?"><button id="add-item">Add</button></form>
<ul id="list"></ul><p id="note"></p></main><script>
const note = document.getElementById('note');
let items = [];
try { items = JSON.parse(localStorage.getItem('todos') || '[]'); } catch (e) { note.textContent = 'storage blocked: ' + e.name; }
const render = () => list.replaceChildren(...items.map((t) => Object.assign(document.createElement('li'), { textContent: t })));
add.addEventListener('submit', (e) => {
  e.preventDefault();
  items.push(item.value);
  item.value = '';
  try { localStorage.setItem('todos', JSON.stringify(items)); } catch (x) { note.textContent = 'storage blocked: ' + x.name; }
  render();
});
render();
</script></body></html>`;

/**
 * Reports what its script finds of storage and cookies (before writing), then leaves its own mark in both: a
 * localStorage item, a host cookie and a cookie for `domain=localhost` (which would reach the service).
 */
const PROBE = `<!doctype html><html><head><title>probe</title></head><body><pre id="out">pending</pre><script>
const me = location.hostname.split('.')[0];
const seen = { origin: self.origin, storage: null, cookie: null };
try { seen.storage = JSON.stringify(Object.entries(localStorage)); localStorage.setItem('mark-' + me, me); }
catch (e) { seen.storage = 'blocked:' + e.name; }
try {
  seen.cookie = document.cookie;
  document.cookie = 'mark-' + me + '=' + me + '; path=/';
  document.cookie = 'wide-' + me + '=' + me + '; domain=localhost; path=/';
} catch (e) { seen.cookie = 'blocked:' + e.name; }
out.textContent = JSON.stringify(seen);
</script></body></html>`;

interface Seen {
  readonly origin: string;
  readonly storage: string;
  readonly cookie: string;
}

async function probed(frame: Frame | Page): Promise<Seen> {
  await expect.poll(() => frame.locator('#out').textContent()).not.toBe('pending');
  return JSON.parse((await frame.locator('#out').textContent()) ?? '{}');
}

const labelOf = (drop: Published) => new URL(drop.content_url).hostname.split('.')[0] ?? '';

describe('the launch flag', () => {
  it("is Playwright's own --disable-features list minus ThirdPartyStoragePartitioning", () => {
    // The copy in test/browser.ts against the installed playwright-core, so an upgrade cannot drift silently.
    const bundle = createRequire(import.meta.url).resolve('playwright-core/lib/coreBundle');
    const source = fs.readFileSync(bundle, 'utf8');
    const list = /\bdisabledFeatures = \[([\s\S]*?)\]\.filter/.exec(source)?.[1] ?? '';
    const features = [...list.replace(/\/\/.*$/gm, '').matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    expect(features).toEqual(PLAYWRIGHT_DISABLED_FEATURES);
    expect(features).toContain('ThirdPartyStoragePartitioning');
  });
});

describe('a drop on its own origin', () => {
  it('keeps a to-do list in localStorage inside the viewer across a reload, framed with allow-same-origin', async () => {
    const drop = await publish('To-do', TODO);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, frame } = await openInViewer(context, drop);
    const iframe = page.locator('#drop-frame');
    expect((await iframe.getAttribute('sandbox'))?.split(' ')).toContain('allow-same-origin');
    expect(await iframe.getAttribute('src')).toBe(`${origin(drop)}/v/1/`);
    expect(await frame.evaluate('self.origin')).toBe(origin(drop));

    for (const text of ['Water the plants', 'Book the dentist']) {
      await frame.locator('#item').fill(text);
      await frame.locator('#add-item').click();
    }
    await expect.poll(() => frame.locator('li').allTextContents()).toEqual(['Water the plants', 'Book the dentist']);
    await page.reload();
    const again = await dropFrame(page, drop);
    await expect.poll(() => again.locator('li').allTextContents()).toEqual(['Water the plants', 'Book the dentist']);
    expect(await again.locator('#note').textContent()).toBe('');
    await page.screenshot({ path: screenshotPath('own-origin-todo-desktop') });
    await context.close();
  });

  it("under Playwright's default flags the same frame's storage is refused (why partitionedStorage exists)", async () => {
    const drop = await publish('To-do', TODO);
    const plain = await launchBrowser();
    try {
      const { frame } = await openInViewer(await plain.newContext(), drop);
      await expect.poll(() => frame.locator('#note').textContent()).toMatch(/^storage blocked/);
    } finally {
      await plain.close();
    }
  });

  it("cannot read another drop's storage or cookies, and its domain=localhost cookie never reaches the service", async () => {
    const a = await publish('A', PROBE);
    const b = await publish('B', PROBE);
    const context = await browser.newContext();
    // In the viewer: A's storage works (it finds its own mark on a second visit); B finds none of A's.
    await openInViewer(context, a);
    const aAgain = await probed((await openInViewer(context, a)).frame);
    expect(aAgain.storage).toContain(`mark-${labelOf(a)}`);
    const bFramed = await probed((await openInViewer(context, b)).frame);
    expect(bFramed.origin).toBe(origin(b));
    expect(bFramed.storage).not.toContain(labelOf(a));
    expect(bFramed.cookie).not.toContain(labelOf(a));
    // Top level (first party, where cookies do work): A sets its cookies; B sees neither its storage nor cookies.
    const top = await context.newPage();
    await top.goto(a.content_url);
    await probed(top);
    await top.goto(a.content_url);
    expect((await probed(top)).cookie).toContain(`mark-${labelOf(a)}=`);
    await top.goto(b.content_url);
    const bTop = await probed(top);
    expect(bTop.storage).not.toContain(labelOf(a));
    expect(bTop.cookie).not.toContain(labelOf(a));
    // The service gets none of them, neither in the cookie jar for its URL nor on a request.
    expect(JSON.stringify(await context.cookies(service))).not.toContain(labelOf(a));
    const served = await top.goto(`${service}/llms.txt`);
    expect((await served?.request().allHeaders())?.cookie ?? '').not.toContain(labelOf(a));
    await context.close();
  });

  it('that differ only by case get different origins and separate storage', async () => {
    // One drop through the API (the service picks its slug and label); its twin, the same slug with every letter's
    // case swapped, straight into the store as the service's createDrop would make it.
    let first = await publish('Probe', PROBE);
    while (!/[a-z]/i.test(first.slug)) first = await publish('Probe', PROBE);
    const twin = [...first.slug].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    const made = await h.store.createDrop(
      {
        slug: twin,
        accountId: (await h.call('GET', '/api/me', { token })).json.user_id,
        contentLabel: newContentLabel(),
        title: twin,
        description: null,
        html: PROBE,
        sizeBytes: PROBE.length,
        context: null,
        metadata: {},
        passcodeHash: null,
        now: Date.now(),
      },
      1000,
    );
    expect(made?.slug).toBe(twin);
    const created = [first, (await h.call('GET', `/api/drops/${twin}`, { token })).json as Published];
    const [upper, lower] = created as [Published, Published];
    expect(upper.content_url).not.toBe(lower.content_url);
    const context = await browser.newContext();
    await openInViewer(context, upper);
    const seen = await probed((await openInViewer(context, lower)).frame);
    expect(seen.origin).toBe(origin(lower));
    expect(seen.storage).not.toContain(labelOf(upper));
    expect((await probed((await openInViewer(context, upper)).frame)).storage).toContain(labelOf(upper));
    await context.close();
  });
});

describe("a drop against the service and the owner's session", () => {
  let context: BrowserContext;
  let sessionValues: string[];

  beforeAll(async () => {
    context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(`${service}/console`);
    await Promise.all([p.waitForURL(/\/verify\/local\?state=/), p.locator('#console-sign-in').click()]);
    await p.locator('#username').fill('owner');
    await Promise.all([p.waitForURL(`${service}/console`), p.locator('#local-sign-in').click()]);
    expect(await p.locator('#signed-in-as').textContent()).toContain('owner');
    sessionValues = (await context.cookies(service)).map((c) => c.value);
    expect(sessionValues.length).toBeGreaterThan(0);
    await p.close();
  });
  afterAll(async () => {
    await context?.close();
  });

  it("cannot read the service's cookies, framed or at top level, and its document request carries none", async () => {
    const drop = await publish('Probe', PROBE);
    const { page } = await openInViewer(context, drop);
    const requests: Promise<Record<string, string>>[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(origin(drop))) requests.push(r.allHeaders());
    });
    await page.reload();
    const framed = await probed(await dropFrame(page, drop));
    const top = await context.newPage();
    await top.goto(drop.content_url);
    const topSeen = await probed(top);
    expect(requests.length).toBeGreaterThan(0);
    for (const value of sessionValues) {
      expect(framed.cookie).not.toContain(value);
      expect(topSeen.cookie).not.toContain(value);
      for (const headers of await Promise.all(requests)) expect(headers.cookie ?? '').not.toContain(value);
    }
  });

  it('cannot call /api/me or /console with the owner session, and its own origin answers 404 there', async () => {
    const drop = await publish('Probe', PROBE);
    const { frame } = await openInViewer(context, drop);
    const results = await frame.evaluate(async (serviceUrl) => {
      const tried: Record<string, string> = {};
      for (const url of [`${serviceUrl}/console`, `${serviceUrl}/api/me`, '/console', '/api/me']) {
        try {
          const response = await fetch(url, { credentials: 'include' });
          tried[url] = `${response.status} ${await response.text()}`;
        } catch (e) {
          tried[url] = `rejected ${(e as Error).name}`;
        }
      }
      return tried;
    }, service);
    expect(results[`${service}/console`]).toBe('rejected TypeError');
    expect(results[`${service}/api/me`]).toBe('rejected TypeError');
    for (const path of ['/console', '/api/me']) {
      expect(results[path]).toMatch(/^404 /);
      expect(results[path]).not.toMatch(/signed-in-as|user_id|owner/);
    }
  });

  it('cannot frame /verify', async () => {
    const verify = await context.newPage();
    await verify.goto(`${service}/verify`);
    expect(await verify.locator('h1').textContent()).toBe('Connect an agent');
    await verify.close();
    const drop = await publish(
      'Framer',
      `<!doctype html><title>framer</title><iframe id="v" src="${service}/verify"></iframe><p id="out">pending</p>
<script>v.addEventListener('load', () => { out.textContent = 'loaded'; });</script>`,
    );
    const { page, frame } = await openInViewer(context, drop);
    await expect.poll(() => frame.locator('#out').textContent()).toBe('loaded');
    expect(page.frames().length).toBe(3);
    for (const f of page.frames()) {
      expect(await f.content().catch(() => '')).not.toContain('Connect an agent');
      expect(await f.locator('#code').count()).toBe(0);
    }
  });

  it("cannot fetch another drop's own origin, with credentials or without CORS", async () => {
    const target = await publish('Target', `<!doctype html><title>target</title><p>target-secret-bytes</p>`);
    const drop = await publish('Probe', PROBE);
    const { frame } = await openInViewer(context, drop);
    const results = await frame.evaluate(async (url) => {
      const tried: string[] = [];
      for (const init of [{ credentials: 'include' }, { mode: 'no-cors', credentials: 'include' }] as RequestInit[]) {
        try {
          const response = await fetch(url, init);
          tried.push(`${response.type} ${response.status} ${await response.text()}`);
        } catch (e) {
          tried.push(`rejected ${(e as Error).name}`);
        }
      }
      return tried;
    }, target.content_url);
    // CORS refuses the first; Cross-Origin-Resource-Policy: same-origin refuses even the opaque no-cors answer.
    expect(results).toEqual(['rejected TypeError', 'rejected TypeError']);
  });
});
