/**
 * Previews and embeds in real Chromium (docs/api.md, "Previews and embeds"): screenshots made by the service's own
 * browser after a write (the rendered page, per version; a locked drop's shown only to who may open it; hostile pages
 * neither stall the queue nor reach the network); a site embeds a drop through its oEmbed answer (and a site not in
 * HTMLDROP_EMBED_ORIGINS cannot); the embed page is accessible.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_NICENESS, nicenessOfTree } from '../src/serve/process-priority.js';
import { createTitleCards } from '../src/serve/title-card.js';
import { axeViolations, blocking } from './axe.js';
import { CHROMIUM, launchBrowser, screenshotPath } from './browser.js';
import { createHarness, type Harness, page } from './helpers.js';
import { decodePng, differingShare, pixelAt } from './png.js';
import { freePort } from './process.js';

let h: Harness;
let browser: Browser;
let base: string;
let allowed: http.Server;
let foreign: http.Server;
let token: string;

/**
 * An oEmbed consumer, as a wiki is: for `/?url=<a drop's URL>` it asks the service's `/oembed` (server-side) and
 * writes the answer's `html` into its page.
 */
function consumerSite(): Promise<http.Server> {
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://x').searchParams.get('url') ?? '';
    const answer = await fetch(`${base}/oembed?url=${encodeURIComponent(url)}&maxwidth=640&maxheight=480`);
    const { html } = (await answer.json()) as { html: string };
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(`<!doctype html><html lang="en"><title>A wiki page</title><h1>Our wiki</h1>${html}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const siteUrl = (server: http.Server) => `http://localhost:${(server.address() as AddressInfo).port}`;

beforeAll(async () => {
  allowed = await consumerSite();
  foreign = await consumerSite();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await createHarness({ env: { HTMLDROP_BASE_URL: base, HTMLDROP_EMBED_ORIGINS: siteUrl(allowed) } });
  await h.app.listen({ port, host: '127.0.0.1' });
  token = await h.token('embedder');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  allowed?.close();
  foreign?.close();
});

async function publish(body: Record<string, unknown>): Promise<{ slug: string; url: string }> {
  const reply = await h.call('POST', '/api/drops', { token, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.json;
}

/** The text of the drop's document inside the embed inside the site's page, or undefined when it did not render. */
async function embeddedText(site: http.Server, url: string): Promise<string | undefined> {
  const tab = await browser.newPage();
  try {
    await tab.goto(`${siteUrl(site)}/?url=${encodeURIComponent(url)}`);
    const embed = tab.frames().find((f) => f.parentFrame() === tab.mainFrame());
    if (embed === undefined) return undefined;
    // A refused frame is Chromium's error page, at another URL, without the embed's inner frame.
    await embed.waitForLoadState('load');
    if (!embed.url().startsWith(`${base}/p/`)) return undefined;
    const drop = await waitForChild(embed);
    return drop === undefined ? undefined : ((await drop.locator('body').textContent()) ?? undefined);
  } finally {
    await tab.close();
  }
}

async function waitForChild(frame: Frame): Promise<Frame | undefined> {
  const element = await frame.waitForSelector('#drop-frame', { timeout: 5000 }).catch(() => null);
  const child = await element?.contentFrame();
  await child?.waitForLoadState('load');
  return child ?? undefined;
}

describe('a site embeds a drop through oEmbed', () => {
  it('on a site HTMLDROP_EMBED_ORIGINS allows, the drop renders in the embed, sized as asked', async () => {
    const { url } = await publish({ title: 'Embedded report', html: page('rendered inside the wiki') });
    expect(await embeddedText(allowed, url)).toContain('rendered inside the wiki');
    const tab = await browser.newPage();
    await tab.goto(`${siteUrl(allowed)}/?url=${encodeURIComponent(url)}`);
    const box = await tab.locator('iframe').first().boundingBox();
    expect([box?.width, box?.height]).toEqual([640, 480]);
    await tab.close();
  });

  it('the viewer’s head, as Chromium parses it, names the card image and the oEmbed answer', async () => {
    const { slug, url } = await publish({ title: 'Card <&> "title"', html: page('card') });
    const tab = await browser.newPage();
    await tab.goto(url);
    const tags = (await tab.evaluate(
      `[...document.head.querySelectorAll('meta[property], meta[name], link[rel=alternate]')].map((e) => [e.getAttribute('property') ?? e.getAttribute('name') ?? e.type, e.content ?? e.href])`,
    )) as [string, string][];
    const tag = new Map(tags);
    expect(tag.get('og:title')).toBe('Card <&> "title"');
    expect(tag.get('og:image')).toBe(`${base}/p/${slug}/preview.png?v=1`);
    expect(tag.get('twitter:card')).toBe('summary_large_image');
    const oembed = tag.get('application/json+oembed') as string;
    const answer = (await (await fetch(oembed)).json()) as { title: string; type: string };
    expect(answer).toMatchObject({ title: 'Card <&> "title"', type: 'rich' });
    await tab.close();
  });

  it('on any other site, nothing of the drop renders', async () => {
    const { url } = await publish({ title: 'Not here', html: page('must not render elsewhere') });
    expect(await embeddedText(foreign, url)).toBeUndefined();
  });

  it('the embed page has no serious accessibility problem, open or protected', async () => {
    const open = await publish({ title: 'Accessible', html: page('a11y') });
    const locked = await publish({ title: 'Locked', html: page('x'), passcode: 'letmein' });
    const context = await browser.newContext({ bypassCSP: true });
    const tab = await context.newPage();
    for (const slug of [open.slug, locked.slug]) {
      await tab.goto(`${base}/p/${slug}/embed`);
      expect(blocking(await axeViolations(tab))).toEqual([]);
    }
    await context.close();
  });
});

/** The screenshot queue's quiet moment and its longest deferral in this suite (1 s and 30 s in the service). */
const QUIET_MS = 1000;
const MAX_DEFER_MS = 4000;

describe('screenshots with HTMLDROP_CHROMIUM', () => {
  let shots: Harness;
  let shotsToken: string;
  /** Every connection and request a page might make to the outside, counted. */
  let outside: http.Server;
  let outsideHits: string[];

  beforeAll(async () => {
    outsideHits = [];
    outside = http.createServer((request, response) => {
      outsideHits.push(request.url ?? '');
      response.end('reached');
    });
    outside.on('connection', () => outsideHits.push('connection'));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
    const port = await freePort();
    shots = await createHarness({
      env: { HTMLDROP_CHROMIUM: CHROMIUM, HTMLDROP_BASE_URL: `http://127.0.0.1:${port}` },
      screenshots: { timeoutMs: 4000, idleMs: 60_000, quietMs: QUIET_MS, maxDeferMs: MAX_DEFER_MS },
      limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
    });
    await shots.app.listen({ port, host: '127.0.0.1' });
    shotsToken = await shots.token('shooter');
  });
  afterAll(async () => {
    await shots?.close();
    outside?.close();
  });

  const queue = () => {
    const queue = shots.services.screenshots;
    if (queue === undefined) throw new Error('no screenshot queue');
    return queue;
  };
  const outsideUrl = () => `http://127.0.0.1:${(outside.address() as AddressInfo).port}`;

  async function publishTo(body: Record<string, unknown>): Promise<{ slug: string; url: string }> {
    const reply = await shots.call('POST', '/api/drops', { token: shotsToken, body });
    expect(reply.status, reply.text).toBe(201);
    return reply.json;
  }

  async function previewOf(url: string, headers: Record<string, string> = {}) {
    const response = await shots.app.inject({ method: 'GET', url, headers });
    return { kind: response.headers['x-preview'], bytes: response.rawPayload, etag: response.headers.etag };
  }

  /** A page filled with one colour, and a heading. */
  const colourPage = (colour: string, text: string) =>
    `<!doctype html><html><body style="margin:0;background:${colour};height:100vh"><h1 style="margin:0;padding:40px;font:64px sans-serif;color:#fff">${text}</h1></body></html>`;

  it('starts no browser while nothing is pending', () => {
    expect(queue().stats.launches).toBe(0);
    expect(queue().browserRunning()).toBe(false);
  });

  it('answers the card at once, then the rendered page: 1200x630, not the card; a v2 gets another image', async () => {
    const { slug } = await publishTo({ title: 'Orange report', html: colourPage('#e4572e', 'Rendered page') });
    // The write's answer did not wait for the browser: the card is served until the screenshot is stored.
    const before = await previewOf(`/p/${slug}/preview.png`);
    expect(before.kind).toBe('card');
    await queue().idle();
    const shot = await previewOf(`/p/${slug}/preview.png`);
    expect(shot.kind).toBe('screenshot');
    const png = decodePng(shot.bytes);
    expect([png.width, png.height]).toEqual([1200, 630]);
    expect(pixelAt(png, 600, 500)).toEqual([0xe4, 0x57, 0x2e]);
    const card = await createTitleCards().card({
      kind: 'version',
      title: 'Orange report',
      description: '',
      version: 1,
      service: new URL(shots.config.baseUrl).host,
    });
    expect(differingShare(png, decodePng(card.png))).toBeGreaterThan(0.5);

    await shots.call('PUT', `/api/drops/${slug}`, { token: shotsToken, body: { html: colourPage('#2e86de', 'Two') } });
    await queue().idle();
    const v2 = await previewOf(`/p/${slug}/preview.png?v=2`);
    expect(v2.kind).toBe('screenshot');
    expect(pixelAt(decodePng(v2.bytes), 600, 500)).toEqual([0x2e, 0x86, 0xde]);
    expect(differingShare(decodePng(v2.bytes), png)).toBeGreaterThan(0.5);
    // The first version keeps its own.
    expect((await previewOf(`/p/${slug}/preview.png?v=1`)).bytes.equals(shot.bytes)).toBe(true);
    // One browser served both.
    expect(queue().stats.launches).toBe(1);
    expect(queue().browserRunning()).toBe(true);
    // Every process and thread of it at a lower priority than the service's.
    const pid = queue().browserProcess();
    expect(pid).toBeTypeOf('number');
    const niceness = nicenessOfTree(pid as number);
    expect(niceness.length).toBeGreaterThan(10);
    expect(niceness.every((n) => n >= BROWSER_NICENESS)).toBe(true);
  });

  it('renders a burst of versions once, at the newest; an older one when it is asked for', async () => {
    const { slug } = await publishTo({ title: 'Burst', html: colourPage('#6a4c93', 'One') });
    const colours = ['#1982c4', '#8ac926', '#ff595e'];
    const superseded = queue().stats.superseded;
    for (const colour of colours) {
      const reply = await shots.call('PUT', `/api/drops/${slug}`, {
        token: shotsToken,
        body: { html: colourPage(colour, colour) },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    await queue().idle();
    // v2 and v3 waited behind a newer version (v1 too, unless its job had started): dropped.
    expect(queue().stats.superseded - superseded).toBeGreaterThanOrEqual(2);
    const v4 = await previewOf(`/p/${slug}/preview.png?v=4`);
    expect(v4.kind).toBe('screenshot');
    expect(pixelAt(decodePng(v4.bytes), 600, 500)).toEqual([0xff, 0x59, 0x5e]);
    expect((await previewOf(`/p/${slug}/preview.png?v=2`)).kind).toBe('card');
    // Asking for v2's preview asks for its screenshot.
    await queue().idle();
    const v2 = await previewOf(`/p/${slug}/preview.png?v=2`);
    expect(v2.kind).toBe('screenshot');
    expect(pixelAt(decodePng(v2.bytes), 600, 500)).toEqual([0x19, 0x82, 0xc4]);
  });

  it('starts no job while screenshots are still being asked for, then renders them all', async () => {
    const started = queue().stats.started;
    const made = queue().stats.made;
    const slugs: string[] = [];
    for (const colour of ['#264653', '#2a9d8f', '#e9c46a']) {
      slugs.push((await publishTo({ title: colour, html: colourPage(colour, colour) })).slug);
    }
    // A burst goes on (every 50 ms, well inside the quiet moment) for about as long as the quiet moment twice over.
    const burstEnds = Date.now() + 2 * QUIET_MS;
    while (Date.now() < burstEnds) {
      queue().request(slugs[Date.now() % slugs.length] as string, undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(queue().stats.started).toBe(started);
    await queue().idle();
    expect(queue().stats.made - made).toBeGreaterThanOrEqual(slugs.length);
    for (const slug of slugs) expect((await previewOf(`/p/${slug}/preview.png`)).kind).toBe('screenshot');
  });

  it('renders while the screenshots asked for go on without pause, once the oldest has waited its longest', async () => {
    const started = queue().stats.started;
    const { slug } = await publishTo({ title: 'Steady', html: colourPage('#f4a261', 'Steady') });
    const asked = Date.now();
    // A version a tenth of a second, without end: the newest renders once the first has waited MAX_DEFER_MS.
    let version = 1;
    while (queue().stats.started === started && Date.now() - asked < MAX_DEFER_MS + 5000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      version += 1;
      const reply = await shots.call('PUT', `/api/drops/${slug}`, {
        token: shotsToken,
        body: { html: colourPage('#f4a261', `v${version}`) },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    expect(queue().stats.started).toBeGreaterThan(started);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(MAX_DEFER_MS - 500);
    await queue().idle();
  }, 30_000);

  it('renders a drop with its files, from its own folder', async () => {
    const html = '<!doctype html><link rel="stylesheet" href="style.css"><body><p>styled</p></body>';
    const css = 'body{margin:0;background:#1b998b;height:100vh}';
    const { slug } = await publishTo({ title: 'Files', html, files: { 'style.css': { content: css } } });
    await queue().idle();

    const shot = await previewOf(`/p/${slug}/preview.png`);
    expect(shot.kind).toBe('screenshot');
    expect(pixelAt(decodePng(shot.bytes), 600, 500)).toEqual([0x1b, 0x99, 0x8b]);
  });

  it('shows a locked drop only to who may open it: others get the protected card', async () => {
    const { slug } = await publishTo({ title: 'Secret', html: colourPage('#e4572e', 'Secret'), passcode: 'letmein' });
    await queue().idle();
    expect(await shots.store.findPreview(slug, 1)).toBeDefined();
    const visitor = await previewOf(`/p/${slug}/preview.png`);
    expect(visitor.kind).toBe('card');
    expect(visitor.etag).toMatch(/^"card-/);
    const png = decodePng(visitor.bytes);
    // The protected card's dark background, not the page's orange.
    expect(pixelAt(png, 600, 500)).not.toEqual([0xe4, 0x57, 0x2e]);
    const generic = await createTitleCards().card({ kind: 'protected', service: new URL(shots.config.baseUrl).host });
    expect(visitor.bytes.equals(generic.png)).toBe(true);
    const unlocked = await shots.call('POST', `/p/${slug}/unlock`, {
      rawBody: 'passcode=letmein',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: shots.config.baseUrl },
    });
    const cookie = String(unlocked.headers['set-cookie']).split(';')[0] ?? '';
    expect((await previewOf(`/p/${slug}/preview.png`, { cookie })).kind).toBe('screenshot');
  });

  it('the console lists drops with their thumbnails: loaded lazily, sized, no layout shift, accessible', async () => {
    for (const colour of ['#e4572e', '#2e86de', '#1b998b']) {
      await publishTo({ title: `Listed ${colour}`, html: colourPage(colour, colour) });
    }
    await queue().idle();
    const consoleBase = shots.config.baseUrl;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    const tab = await context.newPage();
    // Every layout shift the page makes, from its first paint.
    await tab.addInitScript(
      'window.__shift = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) window.__shift += e.value; }).observe({ type: "layout-shift", buffered: true });',
    );
    // Signed in through the local provider, as a person does.
    await tab.goto(`${consoleBase}/console/login?next=/console`);
    await tab.fill('input[name=username]', 'shooter');
    await tab.click('button[type=submit]');
    await tab.waitForURL(`${consoleBase}/console`);
    const thumbs = tab.locator('img.thumb');
    expect(await thumbs.count()).toBeGreaterThanOrEqual(3);
    expect(await thumbs.first().getAttribute('loading')).toBe('lazy');
    await tab.waitForFunction(
      '[...document.images].filter((i) => i.classList.contains("thumb") && i.getBoundingClientRect().top < innerHeight).every((i) => i.complete && i.naturalWidth > 0)',
    );
    const first = await tab.evaluate(
      '(() => { const i = document.querySelector("img.thumb"); return [i.naturalWidth, i.naturalHeight, i.offsetWidth, i.offsetHeight]; })()',
    );
    expect(first).toEqual([1200, 630, 160, 84]);
    expect(await tab.evaluate('window.__shift')).toBe(0);
    expect(blocking(await axeViolations(tab))).toEqual([]);
    await tab.locator('#drop-list a').first().click();
    await tab.waitForSelector('#drop-preview');
    await tab.waitForFunction('document.getElementById("drop-preview").complete');
    expect(await tab.evaluate('window.__shift')).toBe(0);
    expect(blocking(await axeViolations(tab))).toEqual([]);
    const dropUrl = tab.url();
    // For reviewers: the list, the drop page and an embed, on a desktop, a phone and in the dark.
    const signedIn = await context.storageState();
    await context.close();
    const looks = {
      desktop: { viewport: { width: 1280, height: 800 } },
      phone: { viewport: { width: 390, height: 844 }, isMobile: true },
      dark: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
    };
    for (const [name, look] of Object.entries(looks)) {
      const shotContext = await browser.newContext({ ...look, storageState: signedIn });
      const shot = await shotContext.newPage();
      await shot.goto(`${consoleBase}/console`, { waitUntil: 'networkidle' });
      await shot.screenshot({ path: screenshotPath(`console-thumbnails-${name}`) });
      await shot.goto(dropUrl, { waitUntil: 'networkidle' });
      await shot.screenshot({ path: screenshotPath(`console-drop-preview-${name}`) });
      await shotContext.close();
    }
  });

  it('is not stalled by hostile pages, and no page reaches the network', async () => {
    const out = outsideUrl();
    const hostile = {
      loop: '<!doctype html><body><script>for (;;) {}</script></body>',
      canvas:
        '<!doctype html><body><canvas id="c" width="30000" height="30000"></canvas><script>const x = c.getContext("2d"); for (let i = 0; i < 50; i++) x.fillRect(0, 0, 30000, 30000);</script></body>',
      away: `<!doctype html><body style="margin:0;background:#2e86de;height:100vh"><script>window.open("${out}/popup"); setTimeout(() => { location.href = "${out}/away"; }, 0);</script></body>`,
      network: `<!doctype html><head><link rel="preconnect" href="${out}"><link rel="stylesheet" href="${out}/style.css"></head><body style="margin:0;background:#1b998b;height:100vh"><img src="${out}/img.png"><iframe src="${out}/frame"></iframe><script>fetch("${out}/fetch").catch(() => {}); navigator.sendBeacon("${out}/beacon", "x"); try { new WebSocket("${out.replace('http', 'ws')}/ws"); } catch {} const s = document.createElement("script"); s.src = "${out}/script.js"; document.head.append(s);</script></body>`,
    };
    const slugs: Record<string, string> = {};
    for (const [name, html] of Object.entries(hostile)) slugs[name] = (await publishTo({ title: name, html })).slug;
    const after = await publishTo({ title: 'After them', html: colourPage('#e4572e', 'After') });
    const started = Date.now();
    await queue().idle();
    // Each job within its bound (4 s here), and the browser replaced after the one that ran out of time.
    expect(Date.now() - started).toBeLessThan(5 * 4000 + 10_000);
    expect((await previewOf(`/p/${after.slug}/preview.png`)).kind).toBe('screenshot');
    expect((await previewOf(`/p/${slugs.loop}/preview.png`)).kind).toBe('card');
    // The page that tried to leave was photographed where it was.
    const away = await previewOf(`/p/${slugs.away}/preview.png`);
    expect(away.kind).toBe('screenshot');
    expect(pixelAt(decodePng(away.bytes), 600, 500)).toEqual([0x2e, 0x86, 0xde]);
    const network = await previewOf(`/p/${slugs.network}/preview.png`);
    expect(network.kind).toBe('screenshot');
    expect(outsideHits).toEqual([]);
    expect(queue().stats.failed).toBeGreaterThanOrEqual(1);
    expect(queue().stats.launches).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('closes with the service at once, even while a page hangs, and takes no job after', async () => {
    const begun = queue().stats.started;
    await publishTo({ title: 'Hangs', html: '<!doctype html><body><script>for (;;) {}</script></body>' });
    // The job has started (its browser runs) when the queue is closed.
    await expect.poll(() => queue().stats.started, { timeout: 10_000, interval: 20 }).toBeGreaterThan(begun);
    expect(queue().browserRunning()).toBe(true);
    const started = Date.now();
    await queue().close();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(queue().browserRunning()).toBe(false);
    const launches = queue().stats.launches;
    await publishTo({ title: 'After close', html: colourPage('#e4572e', 'x') });
    await queue().idle();
    expect(queue().browserRunning()).toBe(false);
    expect(queue().stats.launches).toBe(launches);
  });
});

describe('screenshots without content origins (HTMLDROP_CONTENT_ORIGIN=off)', () => {
  it('render the drop from its raw folder, with its files', async () => {
    const raw = await createHarness({ env: { HTMLDROP_CHROMIUM: CHROMIUM, HTMLDROP_CONTENT_ORIGIN: 'off' } });
    try {
      expect(raw.services.contentHosts).toBeUndefined();
      const rawToken = await raw.token('raw');
      const html = '<!doctype html><link rel="stylesheet" href="style.css"><body><p>styled</p></body>';
      const css = 'body{margin:0;background:#2e86de;height:100vh}';
      const created = await raw.call('POST', '/api/drops', {
        token: rawToken,
        body: { title: 'Raw', html, files: { 'style.css': { content: css } } },
      });
      await raw.services.screenshots?.idle();
      const response = await raw.app.inject({ method: 'GET', url: `/p/${created.json.slug}/preview.png` });
      expect(response.headers['x-preview']).toBe('screenshot');
      expect(pixelAt(decodePng(response.rawPayload), 600, 500)).toEqual([0x2e, 0x86, 0xde]);
    } finally {
      await raw.close();
    }
  });
});
