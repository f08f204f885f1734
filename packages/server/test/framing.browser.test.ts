/**
 * Who may frame the viewer (docs/api.md 4.6, `frame-ancestors`): the service's own pages, plus the origins of
 * HTMLDROP_EMBED_ORIGINS; any other site gets no viewer and no passcode form, checked in Chromium.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { launchBrowser } from './browser.js';
import { createHarness, type Harness, page } from './helpers.js';
import { freePort } from './process.js';

let h: Harness;
let browser: Browser;
let base: string;
let allowed: http.Server;
let foreign: http.Server;
let openSlug: string;
let lockedSlug: string;

/** A site whose page frames the viewer URL given in its query string. */
function framingSite(): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const target = new URL(request.url ?? '/', 'http://x').searchParams.get('frame') ?? '';
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(`<!doctype html><title>embedder</title><iframe src="${target}" width="600" height="400"></iframe>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const siteUrl = (server: http.Server) => `http://localhost:${(server.address() as AddressInfo).port}`;

beforeAll(async () => {
  allowed = await framingSite();
  foreign = await framingSite();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await createHarness({ env: { HTMLDROP_BASE_URL: base, HTMLDROP_EMBED_ORIGINS: siteUrl(allowed) } });
  await h.app.listen({ port, host: '127.0.0.1' });
  const token = await h.token('framer');
  openSlug = (await h.call('POST', '/api/drops', { token, body: { title: 'Embeddable', html: page('inside') } })).json
    .slug;
  lockedSlug = (
    await h.call('POST', '/api/drops', { token, body: { title: 'Locked', html: page('x'), passcode: 'pass-1234' } })
  ).json.slug;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  allowed?.close();
  foreign?.close();
});

/** Whether the viewer rendered inside the framing site's iframe (a blocked frame shows Chromium's error page). */
async function viewerRendersIn(site: http.Server, slug: string): Promise<boolean> {
  const tab = await browser.newPage();
  await tab.goto(`${siteUrl(site)}/?frame=${encodeURIComponent(`${base}/p/${slug}`)}`);
  await tab.waitForLoadState('load');
  const frame = tab.frames().find((f) => f !== tab.mainFrame());
  const url = frame?.url() ?? '';
  await tab.close();
  return url.startsWith(base);
}

describe('frame-ancestors', () => {
  it('the viewer names the service and the configured origins as its only ancestors', async () => {
    const reply = await h.call('GET', `/p/${openSlug}`);
    expect(reply.headers['content-security-policy']).toContain(`frame-ancestors 'self' ${siteUrl(allowed)}`);
    const gate = await h.call('GET', `/p/${lockedSlug}`);
    expect(gate.headers['content-security-policy']).toContain(`frame-ancestors 'self' ${siteUrl(allowed)}`);
  });

  it('a site on the list embeds the viewer', async () => {
    expect(await viewerRendersIn(allowed, openSlug)).toBe(true);
  });

  it('any other site gets neither the viewer nor the passcode form', async () => {
    expect(await viewerRendersIn(foreign, openSlug)).toBe(false);
    expect(await viewerRendersIn(foreign, lockedSlug)).toBe(false);
  });
});

describe('HTMLDROP_EMBED_ORIGINS', () => {
  it.each([
    ['', []],
    ['*', ['*']],
    ['https://wiki.example.com, http://localhost:3000', ['https://wiki.example.com', 'http://localhost:3000']],
    ['https://wiki.example.com/', ['https://wiki.example.com']],
  ])('%j reads as %j', (value, expected) => {
    expect(loadConfig({ HTMLDROP_EMBED_ORIGINS: value }).embedOrigins).toEqual(expected);
  });

  it.each(['wiki.example.com', 'https://wiki.example.com/page', 'ftp://x.example', '*, https://a.example'])(
    'refuses %j with a one-line reason',
    (value) => {
      expect(() => loadConfig({ HTMLDROP_EMBED_ORIGINS: value })).toThrow(/HTMLDROP_EMBED_ORIGINS/);
    },
  );
});
