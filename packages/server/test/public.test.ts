/** Public serving through inject(): raw headers on every branch, caching, the passcode gate, view counts. */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFENSIVE_STYLE } from '../src/serve/inject.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';

let h: Harness;
let token: string;

beforeAll(async () => {
  // A stopped clock keeps the passcode-attempt window of the rate-limit test inside one 15-minute window.
  h = await createHarness({
    limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
    clock: createTestClock(),
  });
  token = await h.token('publisher');
});
afterAll(() => h.close());

async function publish(body: Record<string, unknown> = {}) {
  const reply = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Public', html: page('v1 '.repeat(300)), ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { slug: string; url: string; raw_url: string };
}

const SANDBOX = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

describe('GET /p/<slug>/raw', () => {
  it('serves the stored bytes with the spec 4.6 additions and the headers of docs/api.md 4.6', async () => {
    const { slug } = await publish();
    const reply = await h.call('GET', `/p/${slug}/raw`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(
      page('v1 '.repeat(300)).replace(
        '</head>',
        `<meta name="viewport" content="width=device-width, initial-scale=1">${DEFENSIVE_STYLE}</head>`,
      ),
    );
    expect(reply.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'content-security-policy': SANDBOX,
      'referrer-policy': 'no-referrer',
      'cache-control': 'public, max-age=60, s-maxage=60',
      vary: 'Accept-Encoding',
    });
    expect(reply.headers['content-security-policy']).not.toContain('allow-same-origin');
    expect(reply.headers.etag).toMatch(/^"1-/);
  });

  it('serves ?v=<n> with long immutable caching, and the latest with short caching', async () => {
    const { slug } = await publish();
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('second') } });
    const pinned = await h.call('GET', `/p/${slug}/raw?v=1`);
    expect(pinned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(pinned.text).toContain('v1 v1');
    const latest = await h.call('GET', `/p/${slug}/raw`);
    expect(latest.text).toContain('second');
  });

  it('answers 304 to a matching If-None-Match, with the validators and no body', async () => {
    const { slug } = await publish();
    const first = await h.call('GET', `/p/${slug}/raw`);
    const again = await h.call('GET', `/p/${slug}/raw`, { headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['cache-control']).toBe('public, max-age=60, s-maxage=60');
  });

  it('answers HEAD with the GET headers and no body', async () => {
    const { slug } = await publish();
    const get = await h.call('GET', `/p/${slug}/raw`);
    const head = await h.call('HEAD', `/p/${slug}/raw`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers.etag).toBe(get.headers.etag);
  });

  it('compresses with brotli or gzip when accepted, never when refused', async () => {
    const { slug } = await publish();
    const plain = await h.call('GET', `/p/${slug}/raw`);
    const br = await h.app.inject({ url: `/p/${slug}/raw`, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.text);
    const gz = await h.app.inject({ url: `/p/${slug}/raw`, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain.text);
    const none = await h.app.inject({ url: `/p/${slug}/raw`, headers: { 'accept-encoding': 'identity' } });
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(gz.headers.etag).not.toBe(plain.headers.etag);
  });

  it('answers 404 with a small HTML page for unknown drops, versions and bad slugs', async () => {
    const { slug } = await publish();
    for (const url of [
      '/p/NoSuchDrop/raw',
      `/p/${slug}/raw?v=9`,
      `/p/${slug}/raw?v=abc`,
      '/p/..%2f/raw',
      '/p/%C3%BC/raw',
    ]) {
      const reply = await h.call('GET', url);
      expect(reply.status, url).toBe(404);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expect(reply.text).toContain('Nothing here');
    }
  });

  it('follows every change at once: PUT, version delete, drop delete', async () => {
    const { slug } = await publish();
    expect((await h.call('GET', `/p/${slug}/raw`)).text).toContain('v1 v1');
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
    expect((await h.call('GET', `/p/${slug}/raw`)).text).toContain('two');
    await h.call('DELETE', `/api/drops/${slug}/v/2`, { token });
    expect((await h.call('GET', `/p/${slug}/raw`)).text).toContain('v1 v1');
    expect((await h.call('GET', `/p/${slug}/raw?v=2`)).status).toBe(404);
    await h.call('DELETE', `/api/drops/${slug}`, { token });
    expect((await h.call('GET', `/p/${slug}/raw`)).status).toBe(404);
    expect((await h.call('GET', `/p/${slug}/raw?v=1`)).status).toBe(404);
  });
});

describe('locked drops', () => {
  const cookieOf = (setCookie: unknown) => String(setCookie).split(';')[0] ?? '';

  it('give no byte through raw or the viewer without the passcode, with private no-store', async () => {
    const { slug } = await publish({ passcode: 'letmein', title: 'Secret title', description: 'Secret description' });
    for (const url of [`/p/${slug}/raw`, `/p/${slug}/raw?v=1`]) {
      const raw = await h.call('GET', url);
      expect(raw.status).toBe(401);
      expect(raw.headers['cache-control']).toBe('private, no-store');
      expect(raw.text).not.toContain('v1 v1');
      expect(raw.text).toContain(`/p/${slug}`);
    }
    const head = await h.call('HEAD', `/p/${slug}/raw`);
    expect(head.status).toBe(401);
    const viewer = await h.call('GET', `/p/${slug}`);
    expect(viewer.status).toBe(200);
    expect(viewer.headers['cache-control']).toBe('private, no-store');
    expect(viewer.text).toContain('name="passcode"');
    expect(viewer.text).not.toContain('v1 v1');
    expect(viewer.text).not.toContain('Secret title');
    expect(viewer.text).not.toContain('Secret description');
    expect(viewer.text).not.toContain('/raw');
  });

  it('grant a capability for the right passcode (cookie scoped to the drop, token in the iframe URL)', async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    const wrong = await h.call('POST', `/p/${slug}/unlock`, {
      rawBody: 'passcode=nope',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.text).toContain('not right');
    const right = await h.call('POST', `/p/${slug}/unlock?v=1`, {
      rawBody: 'passcode=letmein',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe(`/p/${slug}?v=1`);
    const setCookie = String(right.headers['set-cookie']);
    expect(setCookie).toContain(`Path=/p/${slug}`);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    const cookie = cookieOf(setCookie);
    const viewer = await h.call('GET', `/p/${slug}`, { headers: { cookie } });
    expect(viewer.text).toContain('Public');
    const frame = /src="([^"]*\/raw[^"]*)"/.exec(viewer.text)?.[1]?.replaceAll('&amp;', '&');
    // The capability goes first in the frame's path (docs/api.md, "Many files in one drop").
    expect(frame).toMatch(new RegExp(`^/p/${slug}/raw/~[0-9a-z]+\\.[\\w-]+/v/1/$`));
    const viaToken = await h.call('GET', String(frame));
    expect(viaToken.status).toBe(200);
    expect(viaToken.headers['cache-control']).toBe('private, no-store');
    expect(viaToken.text).toContain('v1 v1');
    const viaCookie = await h.call('GET', `/p/${slug}/raw`, { headers: { cookie } });
    expect(viaCookie.status).toBe(200);
    // The Raw link hands out no capability: the cookie opens it in this browser, and nothing opens it elsewhere.
    const rawLink = /id="raw-link" href="([^"]*)"/.exec(viewer.text)?.[1]?.replaceAll('&amp;', '&');
    expect(rawLink).toBe(`/p/${slug}/raw?v=1`);
    expect((await h.call('GET', String(rawLink), { headers: { cookie } })).status).toBe(200);
    expect((await h.call('GET', String(rawLink))).status).toBe(401);
    // Another drop does not accept this drop's capability.
    const other = await publish({ passcode: 'letmein' });
    expect(
      (await h.call('GET', `/p/${other.slug}/raw?cap=${encodeURIComponent(cookie.split('=')[1] ?? '')}`)).status,
    ).toBe(401);
  });

  it('invalidates old capabilities when the passcode changes or is removed and set again', async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    const right = await h.call('POST', `/p/${slug}/unlock`, {
      rawBody: 'passcode=letmein',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const cookie = cookieOf(right.headers['set-cookie']);
    expect((await h.call('GET', `/p/${slug}/raw`, { headers: { cookie } })).status).toBe(200);
    await h.call('POST', `/api/drops/${slug}/passcode`, { token, body: { passcode: 'newcode' } });
    expect((await h.call('GET', `/p/${slug}/raw`, { headers: { cookie } })).status).toBe(401);
    await h.call('POST', `/api/drops/${slug}/passcode`, { token, body: { passcode: '' } });
    expect((await h.call('GET', `/p/${slug}/raw`)).status).toBe(200);
    await h.call('POST', `/api/drops/${slug}/passcode`, { token, body: { passcode: 'letmein' } });
    expect((await h.call('GET', `/p/${slug}/raw`, { headers: { cookie } })).status).toBe(401);
  });

  it("open to the owner's bearer token, not to another account's", async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    expect((await h.call('GET', `/p/${slug}/raw`, { token })).status).toBe(200);
    expect((await h.call('GET', `/p/${slug}/raw`, { token: await h.token('someone-else') })).status).toBe(401);
    expect((await h.call('GET', `/p/${slug}/raw`, { headers: { authorization: 'Bearer hd_garbage' } })).status).toBe(
      401,
    );
  });

  it('rate limits wrong passcodes: 429 after 10 per window per drop and client, the right one does not count', async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    const attempt = (passcode: string, ip = '203.0.113.7') =>
      h.app.inject({
        method: 'POST',
        url: `/p/${slug}/unlock`,
        remoteAddress: ip,
        payload: `passcode=${passcode}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    expect((await attempt('letmein')).statusCode).toBe(303);
    const wrong = await Promise.all(Array.from({ length: 10 }, () => attempt('wrong')));
    expect(wrong.map((r) => r.statusCode)).toEqual(Array(10).fill(401));
    const limited = await attempt('letmein');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['cache-control']).toBe('private, no-store');
    expect((await attempt('letmein', '198.51.100.2')).statusCode).toBe(303);
  });

  it('caps wrong passcodes per drop over all addresses: rotating X-Forwarded-For behind a proxy buys nothing', async () => {
    const proxied = await createHarness({
      env: { HTMLDROP_TRUST_PROXY: '1' },
      limits: { maxDropPasscodeAttempts: 30, maxDropPasscodeAttemptsPerDay: 100 },
    });
    try {
      const owner = await proxied.token('proxied-owner');
      const { slug } = (
        await proxied.call('POST', '/api/drops', {
          token: owner,
          body: { title: 't', html: page(), passcode: 'letmein' },
        })
      ).json;
      const guess = (passcode: string, forwardedFor: string) =>
        proxied.app.inject({
          method: 'POST',
          url: `/p/${slug}/unlock`,
          remoteAddress: '10.0.0.2',
          payload: `passcode=${passcode}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
        });
      // 30 wrong guesses, each from a new address: all counted against the drop.
      const wrong = await Promise.all(Array.from({ length: 30 }, (_, i) => guess(`wrong${i}`, `198.51.100.${i + 1}`)));
      expect(wrong.map((r) => r.statusCode)).toEqual(Array(30).fill(401));
      // The 31st, from yet another address, is refused before the passcode is checked: the right one too.
      const refused = await guess('letmein', '192.0.2.200');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // The owner's token still opens the document.
      expect((await proxied.call('GET', `/p/${slug}/raw`, { token: owner })).status).toBe(200);
      // Setting a new passcode reopens the gate for visitors (the ceiling belongs to the passcode's generation).
      await proxied.call('POST', `/api/drops/${slug}/passcode`, { token: owner, body: { passcode: 'fresh-code' } });
      expect((await guess('fresh-code', '192.0.2.201')).statusCode).toBe(303);
    } finally {
      await proxied.close();
    }
  });

  it('counts every IPv6 address of one /64 as one client', async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    const attempt = (passcode: string, ip: string) =>
      h.app.inject({
        method: 'POST',
        url: `/p/${slug}/unlock`,
        remoteAddress: ip,
        payload: `passcode=${passcode}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const wrong = await Promise.all(Array.from({ length: 10 }, (_, i) => attempt('wrong', `2001:db8:5:6::${i + 1}`)));
    expect(wrong.map((r) => r.statusCode)).toEqual(Array(10).fill(401));
    expect((await attempt('letmein', '2001:db8:5:6:ffff::99')).statusCode).toBe(429);
    expect((await attempt('letmein', '2001:db8:5:7::1')).statusCode).toBe(303);
  });

  it('refuses passcode posts from other sites and from drops, before checking and without counting them', async () => {
    const { slug } = await publish({ passcode: 'letmein' });
    const ownOrigin = new URL(h.config.baseUrl).origin;
    const post = (passcode: string, headers: Record<string, string>) =>
      h.app.inject({
        method: 'POST',
        url: `/p/${slug}/unlock`,
        remoteAddress: '203.0.113.9',
        payload: `passcode=${passcode}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    const foreign: Record<string, string>[] = [
      // Another site's page, or a drop (served by this host, but in a sandbox with an opaque origin).
      { 'sec-fetch-site': 'cross-site', origin: 'null' },
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      // A neighbouring subdomain.
      { 'sec-fetch-site': 'same-site', origin: 'https://evil.example.test' },
      // A browser without Fetch Metadata, on another site.
      { origin: 'https://evil.example' },
    ];
    for (const headers of foreign) {
      const right = await post('letmein', headers);
      expect(right.statusCode, JSON.stringify(headers)).toBe(403);
      expect(right.headers['set-cookie']).toBeUndefined();
      expect(right.headers['cache-control']).toBe('private, no-store');
      expect(right.body).toContain('only accepted from this page');
      expect(right.body).toContain(`action="/p/${slug}/unlock"`);
      // Enough wrong ones to hit the limit if they counted.
      for (let i = 0; i < 3; i++) expect((await post('wrong', headers)).statusCode).toBe(403);
    }
    // 16 refused posts later, this client's attempts are untouched; our own page's posts go through, including
    // Chromium's `Origin: null` under no-referrer.
    for (let i = 0; i < 9; i++) {
      expect((await post('wrong', { 'sec-fetch-site': 'same-origin', origin: 'null' })).statusCode).toBe(401);
    }
    expect((await post('letmein', { 'sec-fetch-site': 'same-origin', origin: 'null' })).statusCode).toBe(303);
    expect((await post('letmein', { origin: ownOrigin })).statusCode).toBe(303);
    expect((await post('letmein', { 'sec-fetch-site': 'none' })).statusCode).toBe(303);
    expect((await post('wrong', {})).statusCode).toBe(401);
    expect((await post('letmein', {})).statusCode).toBe(429);
  });
});

describe('GET /p/<slug> (viewer)', () => {
  it('renders the drop in a sandboxed iframe, never showing metadata', async () => {
    const { slug } = await publish({ metadata: { secret_tag: 'do-not-show' }, description: 'A public description' });
    const reply = await h.call('GET', `/p/${slug}`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    expect(reply.headers['content-security-policy']).toContain("frame-src 'self'");
    expect(reply.text).toMatch(/<iframe[^>]*sandbox="[^"]*allow-scripts/);
    expect(reply.text).not.toContain('allow-same-origin');
    expect(reply.text).toContain(`/p/${slug}/raw?v=1`);
    expect(reply.text).toContain('A public description');
    expect(reply.text).not.toContain('secret_tag');
    expect(reply.text).not.toContain('do-not-show');
  });

  it('answers 404 for an unknown drop or version', async () => {
    const { slug } = await publish();
    expect((await h.call('GET', '/p/NoSuchDrop')).status).toBe(404);
    expect((await h.call('GET', `/p/${slug}?v=7`)).status).toBe(404);
  });

  it('counts renders (not raw, not HEAD) in batches', async () => {
    const { slug } = await publish();
    await h.call('GET', `/p/${slug}`);
    await h.call('GET', `/p/${slug}`);
    await h.call('HEAD', `/p/${slug}`);
    await h.call('GET', `/p/${slug}/raw`);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.view_count).toBe(0);
    await h.services.flushCounters();
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.view_count).toBe(2);
  });
});
