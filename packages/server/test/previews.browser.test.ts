/**
 * Previews and embeds in real Chromium (docs/api.md, "Previews and embeds"): a site embeds a drop through its oEmbed
 * answer (and a site not in HTMLDROP_EMBED_ORIGINS cannot); the embed page is accessible.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking } from './axe.js';
import { launchBrowser } from './browser.js';
import { createHarness, type Harness, page } from './helpers.js';
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
    return drop === undefined ? undefined : await drop.locator('body').innerText();
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
