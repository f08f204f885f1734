/**
 * Serving a drop's files (docs/api.md, "Many files in one drop"): on the drop's own origin `/<path>`, `/v/<n>/` and
 * `/v/<n>/<path>`; without it the raw folder `/p/<slug>/raw/v/<n>/[<path>]`. Bytes as uploaded, the type from the
 * extension, nosniff, ETag and 304, byte ranges, locked and expired drops guarded like their document. What a browser
 * makes of it is in files.browser.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';

const clock = createTestClock();
let h: Harness;
let token: string;

const SERVICE = 'http://localhost:8787';
const V1_PNG = randomBytes(5000);
const V2_PNG = randomBytes(7000);
const CSS = `body{margin:0}${'.row{display:flex;gap:4px}'.repeat(100)}`;

beforeAll(async () => {
  h = await createHarness({
    clock,
    env: { HTMLDROP_BASE_URL: SERVICE },
    limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
  });
  token = await h.token('owner');
});
afterAll(async () => {
  await h?.close();
});

const b64 = (bytes: Buffer) => ({ content: bytes.toString('base64'), encoding: 'base64' });

interface Published {
  readonly slug: string;
  readonly host: string;
}

/** A drop whose v1 and v2 each carry their own chart, and a stylesheet. */
async function publishTwo(body: Record<string, unknown> = {}): Promise<Published> {
  const created = await h.call('POST', '/api/drops', {
    token,
    body: {
      title: 'Folder',
      html: page('one'),
      files: { 'img/chart.png': b64(V1_PNG), 'style.css': { content: CSS } },
      ...body,
    },
  });
  expect(created.status, created.text).toBe(201);
  const { slug, content_url } = created.json;
  const put = await h.call('PUT', `/api/drops/${slug}`, {
    token,
    body: { html: page('two'), files: { 'img/chart.png': b64(V2_PNG), 'style.css': { content: CSS } } },
  });
  expect(put.status, put.text).toBe(200);
  return { slug, host: new URL(content_url).host };
}

/** A GET (or HEAD) through the app, with the body as bytes. */
async function fetchBytes(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const response = await h.app.inject({ method, url, headers });
  return { status: response.statusCode, headers: response.headers, body: response.rawPayload };
}

const onHost = (host: string, url: string, headers: Record<string, string> = {}) =>
  fetchBytes(url, { host, ...headers });

let drop: Published;
beforeAll(async () => {
  drop = await publishTwo();
});

describe('on the drop’s own origin', () => {
  it('serves the latest version’s file at /<path> and version n’s at /v/<n>/<path>, byte for byte', async () => {
    const latest = await onHost(drop.host, '/img/chart.png');
    expect(latest.status).toBe(200);
    expect(latest.body.equals(V2_PNG)).toBe(true);
    expect(latest.headers).toMatchObject({
      'content-type': 'image/png',
      'x-content-type-options': 'nosniff',
      'cross-origin-resource-policy': 'same-origin',
      'accept-ranges': 'bytes',
      'cache-control': 'public, max-age=60, s-maxage=60',
      'content-length': '7000',
    });
    expect(latest.headers.etag).toMatch(/^"f-[\w-]{22}"$/);
    // An image neither renders as a document nor runs: no CSP, Referrer-Policy or Vary to send with it.
    for (const header of ['access-control-allow-origin', 'content-security-policy', 'referrer-policy', 'vary']) {
      expect(latest.headers[header], header).toBeUndefined();
    }
    // A stylesheet (and any document or script) carries the document's CSP and Referrer-Policy.
    const css = await onHost(drop.host, '/style.css');
    expect(css.headers['content-security-policy']).toMatch(/^sandbox allow-scripts allow-same-origin /);
    expect(css.headers).toMatchObject({ 'referrer-policy': 'no-referrer', vary: 'Accept-Encoding' });
    const first = await onHost(drop.host, '/v/1/img/chart.png');
    expect(first.status).toBe(200);
    expect(first.body.equals(V1_PNG)).toBe(true);
    expect((await onHost(drop.host, '/v/2/img/chart.png')).body.equals(V2_PNG)).toBe(true);
  });

  it('serves version n’s document at /v/<n>/ and sends /v/<n> there', async () => {
    const v1 = await onHost(drop.host, '/v/1/');
    expect(v1.status).toBe(200);
    expect(v1.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(v1.body.toString()).toContain('<p>one</p>');
    expect(v1.headers.etag).toBe((await onHost(drop.host, '/?v=1')).headers.etag);
    expect((await onHost(drop.host, '/v/2/')).body.toString()).toContain('<p>two</p>');
    expect((await onHost(drop.host, '/')).body.toString()).toContain('<p>two</p>');
    const bare = await onHost(drop.host, '/v/1?x=1');
    expect([bare.status, bare.headers.location]).toEqual([308, '/v/1/?x=1']);
  });

  it('compresses a text file when asked, answers 304 to its ETag, and 404 to what is not there', async () => {
    const css = await onHost(drop.host, '/style.css', { 'accept-encoding': 'br, gzip' });
    expect(css.headers).toMatchObject({ 'content-type': 'text/css; charset=utf-8', 'content-encoding': 'br' });
    const plain = await onHost(drop.host, '/style.css');
    expect(plain.body.toString()).toBe(CSS);
    const again = await onHost(drop.host, '/style.css', { 'if-none-match': String(plain.headers.etag) });
    expect([again.status, again.body.length]).toEqual([304, 0]);
    for (const path of ['/nope.png', '/v/3/img/chart.png', '/v/1/nope', '/img//chart.png', '/%zz']) {
      const missing = await onHost(drop.host, path);
      expect(missing.status, path).toBe(404);
      expect(missing.body.includes(CSS), path).toBe(false);
    }
  });

  it('answers byte ranges: 206 with Content-Range, 416 when unsatisfiable, the whole file for several ranges', async () => {
    const head = await onHost(drop.host, '/img/chart.png', { range: 'bytes=0-9' });
    expect([head.status, head.headers['content-range'], head.headers['content-length']]).toEqual([
      206,
      'bytes 0-9/7000',
      '10',
    ]);
    expect(head.body.equals(V2_PNG.subarray(0, 10))).toBe(true);
    const tail = await onHost(drop.host, '/img/chart.png', { range: 'bytes=-5' });
    expect(tail.body.equals(V2_PNG.subarray(6995))).toBe(true);
    const open = await onHost(drop.host, '/img/chart.png', { range: 'bytes=6990-' });
    expect([open.status, open.headers['content-range']]).toEqual([206, 'bytes 6990-6999/7000']);
    const beyond = await onHost(drop.host, '/img/chart.png', { range: 'bytes=7000-' });
    expect([beyond.status, beyond.headers['content-range']]).toEqual([416, 'bytes */7000']);
    const several = await onHost(drop.host, '/img/chart.png', { range: 'bytes=0-1,5-6' });
    expect([several.status, several.body.length]).toEqual([200, 7000]);
    const stale = await onHost(drop.host, '/img/chart.png', { range: 'bytes=0-9', 'if-range': '"other"' });
    expect(stale.status).toBe(200);
    const css = await onHost(drop.host, '/style.css', { range: 'bytes=0-3', 'accept-encoding': 'br' });
    expect([css.status, css.headers['content-encoding'], css.body.toString()]).toEqual([206, undefined, 'body']);
  });

  it('serves a changed file at /<path> as soon as a PUT is answered', async () => {
    const mine = await publishTwo();
    expect((await onHost(mine.host, '/img/chart.png')).body.equals(V2_PNG)).toBe(true);
    const third = randomBytes(300);
    await h.call('PUT', `/api/drops/${mine.slug}`, {
      token,
      body: { html: page('three'), files: { 'img/chart.png': b64(third) } },
    });
    expect((await onHost(mine.host, '/img/chart.png')).body.equals(third)).toBe(true);
    expect((await onHost(mine.host, '/style.css')).status).toBe(404);
  });

  it('never serves one drop’s files on another drop’s origin', async () => {
    const other = await h.call('POST', '/api/drops', { token, body: { title: 'other', html: page('other') } });
    const otherHost = new URL(other.json.content_url).host;
    expect((await onHost(otherHost, '/img/chart.png')).status).toBe(404);
    expect((await onHost(otherHost, '/v/1/img/chart.png')).status).toBe(404);
  });
});

describe('the raw folder, without a content origin', () => {
  it('serves /p/<slug>/raw/v/<n>/ and its files under the raw sandbox, readable from the document’s opaque origin', async () => {
    const doc = await fetchBytes(`/p/${drop.slug}/raw/v/1/`);
    expect(doc.status).toBe(200);
    expect(doc.body.toString()).toContain('<p>one</p>');
    expect(doc.headers['content-security-policy']).toBe(
      'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads',
    );
    expect(doc.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const file = await fetchBytes(`/p/${drop.slug}/raw/v/1/img/chart.png`);
    expect(file.status).toBe(200);
    expect(file.body.equals(V1_PNG)).toBe(true);
    expect(file.headers).toMatchObject({
      'content-type': 'image/png',
      'x-content-type-options': 'nosniff',
      'access-control-allow-origin': '*',
    });
    expect(file.headers['cross-origin-resource-policy']).toBeUndefined();
    const css = await fetchBytes(`/p/${drop.slug}/raw/v/1/style.css`);
    expect(css.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'content-security-policy': 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads',
    });
    const bare = await fetchBytes(`/p/${drop.slug}/raw/v/2?x=y`);
    expect([bare.status, bare.headers.location]).toEqual([308, `/p/${drop.slug}/raw/v/2/?x=y`]);
  });

  it('leaves /p/<slug>/raw as it was, and has no latest files of its own', async () => {
    const latest = await fetchBytes(`/p/${drop.slug}/raw`);
    expect(latest.status).toBe(200);
    expect(latest.body.toString()).toContain('<p>two</p>');
    expect(latest.headers['accept-ranges']).toBeUndefined();
    expect((await fetchBytes(`/p/${drop.slug}/raw/img/chart.png`)).status).toBe(404);
    expect((await fetchBytes(`/p/${drop.slug}/raw/v/9/`)).status).toBe(404);
    expect((await fetchBytes(`/p/${drop.slug}/raw/v/1/nope.png`)).status).toBe(404);
    expect((await fetchBytes('/p/no-such-drop/raw/v/1/img/chart.png')).status).toBe(404);
  });
});

describe('locked and expired drops guard their files as their document', () => {
  it('a locked drop’s files need the ticket (first in the path), a capability, or the owner’s token', async () => {
    const locked = await publishTwo({ passcode: 'open sesame' });
    const record = await h.call('GET', `/api/drops/${locked.slug}`, { token });
    expect(record.json.locked).toBe(true);
    const generation = (await h.store.findDrop(locked.slug))?.passcodeGeneration ?? 0;
    const ticket = h.services.capabilities.issueTicket(locked.slug, generation).token;
    const capability = h.services.capabilities.issue(locked.slug, generation).token;

    expect((await onHost(locked.host, '/img/chart.png')).status).toBe(401);
    expect((await onHost(locked.host, '/v/1/img/chart.png')).status).toBe(401);
    const opened = await onHost(locked.host, `/~${ticket}/v/1/img/chart.png`);
    expect([opened.status, opened.headers['cache-control']]).toEqual([200, 'private, no-store']);
    expect(opened.body.equals(V1_PNG)).toBe(true);
    expect((await onHost(locked.host, `/~${ticket}/v/1/`)).body.toString()).toContain('<p>one</p>');
    expect((await onHost(locked.host, `/~${capability}/v/1/img/chart.png`)).status).toBe(401);
    expect((await onHost(locked.host, '/img/chart.png', { authorization: `Bearer ${token}` })).status).toBe(200);

    const raw = `/p/${locked.slug}/raw`;
    expect((await fetchBytes(`${raw}/v/1/img/chart.png`)).status).toBe(401);
    expect((await fetchBytes(`${raw}/~${ticket}/v/1/img/chart.png`)).status).toBe(401);
    expect((await fetchBytes(`${raw}/~${capability}/v/1/img/chart.png`)).body.equals(V1_PNG)).toBe(true);
    expect((await fetchBytes(`${raw}/v/1/img/chart.png`, { cookie: `hd_cap=${capability}` })).status).toBe(200);
    expect((await fetchBytes(`${raw}/v/1/img/chart.png?cap=${encodeURIComponent(capability)}`)).status).toBe(200);

    // A new passcode revokes every grant, in the path too.
    await h.call('POST', `/api/drops/${locked.slug}/passcode`, { token, body: { passcode: 'another one' } });
    expect((await onHost(locked.host, `/~${ticket}/v/1/img/chart.png`)).status).toBe(401);
    expect((await fetchBytes(`${raw}/~${capability}/v/1/img/chart.png`)).status).toBe(401);
  });

  it('an expired drop’s files are gone (410) from the instant it expires', async () => {
    const expiring = await publishTwo({ expires_at: clock.now() + 120_000 });
    const before = await onHost(expiring.host, '/img/chart.png');
    expect(before.headers['cache-control']).toBe('public, max-age=60, s-maxage=60');
    clock.advance(100_000);
    expect((await onHost(expiring.host, '/img/chart.png')).headers['cache-control']).toBe(
      'public, max-age=20, s-maxage=20',
    );
    clock.advance(20_000);
    expect((await onHost(expiring.host, '/img/chart.png')).status).toBe(410);
    expect((await fetchBytes(`/p/${expiring.slug}/raw/v/1/img/chart.png`)).status).toBe(410);
  });
});

describe('a network policy', () => {
  it('lets a version with files load them (its own origin; on the raw path its raw folder), and nothing else', async () => {
    const closed = await publishTwo({ network: 'none' });
    const own = await onHost(closed.host, '/v/2/');
    expect(own.headers['content-security-policy']).toContain(
      "default-src data: blob: 'unsafe-inline' 'unsafe-eval' 'self'; form-action 'none'",
    );
    const raw = await fetchBytes(`/p/${closed.slug}/raw/v/2/`);
    expect(raw.headers['content-security-policy']).toContain(
      `default-src data: blob: 'unsafe-inline' 'unsafe-eval' ${SERVICE}/p/${closed.slug}/raw/; form-action 'none'`,
    );
    const bare = await h.call('POST', '/api/drops', { token, body: { title: 'b', html: page(), network: 'none' } });
    const bareDoc = await fetchBytes(`/p/${bare.json.slug}/raw`);
    expect(bareDoc.headers['content-security-policy']).toContain(
      "default-src data: blob: 'unsafe-inline' 'unsafe-eval'; form-action 'none'",
    );
  });
});
