/**
 * Each drop on its own origin, over HTTP (docs/api.md, "Each drop on its own origin"): the Drop's `content_url` and
 * `network`, what a content host serves (that drop's documents and nothing else), locked and expired drops there,
 * the viewer's frame, and the configuration. What a browser makes of it is in own-origin*.browser.test.ts.
 */
import http from 'node:http';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { FRAME_TICKET_TTL_MS } from '../src/domain/capability.js';
import { mayShareSite } from '../src/server.js';
import { createTestDatabase, openAtMigration } from './databases.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';
import { freePort } from './process.js';

const clock = createTestClock();
let h: Harness;
let token: string;
let other: string;

const SERVICE = 'http://localhost:8787';

beforeAll(async () => {
  h = await createHarness({
    clock,
    env: { HTMLDROP_BASE_URL: SERVICE },
    limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
  });
  token = await h.token('owner');
  other = await h.token('someone-else');
});
afterAll(async () => {
  await h?.close();
});

async function publish(body: Record<string, unknown> = {}) {
  const reply = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Report', html: page('secret body'), ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { slug: string; content_url: string; network: unknown };
}

/** The Host of a drop's own origin, from its content_url. */
const hostOf = (contentUrl: string) => new URL(contentUrl).host;

/** A request to a drop's content host (inject: the same routing as a socket, see rewriteUrl). */
function onHost(host: string, url = '/', options: { method?: string; headers?: Record<string, string> } = {}) {
  return h.call(options.method ?? 'GET', url, { headers: { host, ...options.headers } });
}

describe('the Drop', () => {
  it('carries its own origin: a lowercase DNS label made for it, different for every drop', async () => {
    const a = await publish();
    const b = await publish();
    expect(a.content_url).toMatch(/^http:\/\/[0-9a-z]{20}\.localhost:8787\/$/);
    expect(b.content_url).not.toBe(a.content_url);
    expect(a.network).toBe('open');
    const read = await h.call('GET', `/api/drops/${a.slug}`, { token });
    expect(read.json.content_url).toBe(a.content_url);
  });

  it('takes a network policy on create and PATCH, and refuses anything else with invalid_arg on network', async () => {
    const drop = await publish({ network: 'none' });
    expect(drop.network).toBe('none');
    const listed = await h.call('PATCH', `/api/drops/${drop.slug}`, {
      token,
      body: { network: ['https://cdn.jsdelivr.net', 'http://127.0.0.1:9000', 'https://cdn.jsdelivr.net'] },
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.network).toEqual(['https://cdn.jsdelivr.net', 'http://127.0.0.1:9000']);
    for (const network of [
      'closed',
      [],
      ['https://cdn.example.com/lib.js'],
      ['https://cdn.example.com/'],
      ['ftp://files.example.com'],
      ['cdn.example.com'],
      ['https://*.example.com'],
      ['https://CDN.example.com'],
      ['https://x.com;report-uri'],
      ['https://a,b.com'],
      [42],
      Array.from({ length: 11 }, (_, i) => `https://cdn${i}.example.com`),
    ]) {
      const refused = await h.call('PATCH', `/api/drops/${drop.slug}`, { token, body: { network } });
      expect(refused.status, JSON.stringify(network)).toBe(400);
      expect(refused.json.error.code).toBe('invalid_arg');
      expect(JSON.stringify(refused.json.error), JSON.stringify(network)).toContain('network');
    }
    const put = await h.call('PUT', `/api/drops/${drop.slug}`, { token, body: { html: page(), network: 'open' } });
    expect(put.status).toBe(400);
    expect((await h.call('GET', `/api/drops/${drop.slug}`, { token })).json.network).toEqual([
      'https://cdn.jsdelivr.net',
      'http://127.0.0.1:9000',
    ]);
  });
});

describe('a content host', () => {
  it("serves that drop's document at / and /?v=<n>, with its own sandbox, framing and caching", async () => {
    const drop = await publish();
    await h.call('PUT', `/api/drops/${drop.slug}`, { token, body: { html: page('second version') } });
    const host = hostOf(drop.content_url);
    const latest = await onHost(host);
    expect(latest.status).toBe(200);
    expect(latest.text).toContain('second version');
    const csp = String(latest.headers['content-security-policy']);
    expect(csp).toContain('sandbox allow-scripts allow-same-origin');
    expect(csp).toContain(`frame-ancestors 'self' ${SERVICE}`);
    expect(latest.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(latest.headers['cache-control']).toBe('public, max-age=60, s-maxage=60');
    const first = await onHost(host, '/?v=1');
    expect(first.text).toContain('secret body');
    // Kept 60 s like the latest, not a year: a policy change must reach browsers that hold it.
    expect(first.headers['cache-control']).toBe('public, max-age=60, s-maxage=60');
    const again = await onHost(host, '/?v=1', { headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
    const long = await publish({ html: page('compressible '.repeat(200)) });
    const gz = await onHost(hostOf(long.content_url), '/', { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    // Host names are not case-sensitive: the same drop.
    expect((await onHost(host.toUpperCase())).text).toContain('second version');
    for (const v of ['9', 'abc', '0', '1&v=2']) expect((await onHost(host, `/?v=${v}`)).status, v).toBe(404);
    const head = await onHost(host, '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('answers nothing else: no API, no console, no /verify, no other drop, no other method', async () => {
    const drop = await publish();
    const neighbour = await publish({ html: page('the neighbour') });
    const host = hostOf(drop.content_url);
    const paths = [
      '/api/me',
      '/api/drops',
      '/console',
      '/verify',
      `/p/${drop.slug}`,
      `/p/${neighbour.slug}/raw`,
      '/_content/',
      '/index.html',
      '/favicon.ico',
      '/robots.txt',
      '/api/onboard',
    ];
    for (const path of paths) {
      const reply = await h.call('GET', path, { token, headers: { host } });
      expect(reply.status, path).toBe(404);
      expect(reply.headers['content-type'], path).toContain('text/html');
      expect(reply.text, path).not.toContain('the neighbour');
      expect(reply.text, path).not.toContain('secret body');
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      expect((await h.call(method, '/', { token, headers: { host }, body: {} })).status, method).toBe(404);
    }
    // A well-formed label nobody has, a malformed one, and the internal path on the service's own host.
    expect((await onHost(`${'a'.repeat(20)}.localhost:8787`)).status).toBe(404);
    expect((await onHost('not-a-label.localhost:8787')).status).toBe(404);
    expect((await h.call('GET', '/_content/', { headers: { host: 'localhost:8787' } })).status).toBe(404);
    // The service itself still answers on its own host.
    expect((await h.call('GET', '/api/me', { token, headers: { host: 'localhost:8787' } })).status).toBe(200);
  });

  it('enforces the network policy with a CSP, on the content host and the raw path, from the next request on', async () => {
    const drop = await publish();
    const host = hostOf(drop.content_url);
    expect(String((await onHost(host)).headers['content-security-policy'])).not.toContain('default-src');
    const before = await onHost(host, '/?v=1');
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token, body: { network: 'none' } });
    // A new tag: a browser revalidating what it holds gets the new headers, not a 304.
    const after = await onHost(host, '/?v=1', { headers: { 'if-none-match': String(before.headers.etag) } });
    expect(after.status).toBe(200);
    expect(String(after.headers['content-security-policy'])).toContain("form-action 'none'");
    const none = String((await onHost(host)).headers['content-security-policy']);
    expect(none).toContain("default-src data: blob: 'unsafe-inline' 'unsafe-eval'; form-action 'none'");
    const raw = String((await h.call('GET', `/p/${drop.slug}/raw`)).headers['content-security-policy']);
    expect(raw).toContain("default-src data: blob: 'unsafe-inline' 'unsafe-eval'; form-action 'none'");
    expect(raw).not.toContain('allow-same-origin');
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token, body: { network: ['https://cdn.jsdelivr.net'] } });
    expect(String((await onHost(host)).headers['content-security-policy'])).toContain(
      "default-src data: blob: 'unsafe-inline' 'unsafe-eval' https://cdn.jsdelivr.net;",
    );
  });

  it('gives a locked drop only with the ticket the viewer hands its frame, or the owner token', async () => {
    const drop = await publish({ passcode: 'open sesame' });
    const host = hostOf(drop.content_url);
    const bare = await onHost(host);
    expect(bare.status).toBe(401);
    expect(bare.text).not.toContain('secret body');
    expect(bare.headers['cache-control']).toBe('private, no-store');
    expect(String(bare.headers['content-security-policy'])).toContain(`frame-ancestors 'self' ${SERVICE}`);
    expect(bare.text).toContain('htmldrop:locked');

    const unlocked = await h.call('POST', `/p/${drop.slug}/unlock`, {
      rawBody: 'passcode=open%20sesame',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SERVICE },
    });
    // Host-only: no Domain attribute, so no content host (a subdomain of localhost here) ever receives it.
    expect(String(unlocked.headers['set-cookie']).toLowerCase()).not.toContain('domain=');
    const cookie = String(unlocked.headers['set-cookie']).split(';')[0] ?? '';
    const viewer = await h.call('GET', `/p/${drop.slug}`, { headers: { cookie } });
    const src = /<iframe[^>]* src="([^"]+)"/.exec(viewer.text)?.[1]?.replaceAll('&amp;', '&') ?? '';
    // The ticket goes first in the frame's path, so the document's files get it too (docs/api.md, "Serving them").
    expect(src).toMatch(new RegExp(`^${drop.content_url}~[^/]+/v/1/$`));
    const ticket = decodeURIComponent(new URL(src).pathname.split('/')[1]?.slice(1) ?? '');
    expect((await onHost(host, new URL(src).pathname)).text).toContain('secret body');
    // The ticket is short-lived: its expiry (base36 ms) is FRAME_TICKET_TTL_MS away, not the cookie's 12 hours.
    expect(Number.parseInt(ticket.split('.')[0] ?? '', 36) - clock.now()).toBe(FRAME_TICKET_TTL_MS);
    const opened = await onHost(host, `/?v=1&cap=${encodeURIComponent(ticket)}`);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('secret body');
    expect(opened.headers['cache-control']).toBe('private, no-store');
    // The ticket opens that frame and nothing else: not the viewer (which would hand out a new one), not the raw
    // path; and the cookie's capability does not open the content host (browsers do not send it there anyway).
    const viewerWithTicket = await h.call('GET', `/p/${drop.slug}?cap=${encodeURIComponent(ticket)}`);
    expect(viewerWithTicket.text).not.toContain('cap=');
    expect(viewerWithTicket.text).toContain('id="passcode"');
    expect((await h.call('GET', `/p/${drop.slug}/raw?cap=${encodeURIComponent(ticket)}`)).status).toBe(401);
    const capability = decodeURIComponent(cookie.slice('hd_cap='.length));
    expect((await onHost(host, `/?cap=${encodeURIComponent(capability)}`)).status).toBe(401);
    expect((await onHost(host, '/', { headers: { cookie } })).status).toBe(401);
    // The owner's token opens it; another account's does not.
    expect((await onHost(host, '/', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await onHost(host, '/', { headers: { authorization: `Bearer ${other}` } })).status).toBe(401);
    // Another drop's ticket does not open this one.
    const second = await publish({ passcode: 'open sesame' });
    expect((await onHost(hostOf(second.content_url), `/?cap=${encodeURIComponent(ticket)}`)).status).toBe(401);
    // The ticket lapses, and changing the passcode revokes it before that.
    clock.advance(FRAME_TICKET_TTL_MS + 1);
    expect((await onHost(host, `/?v=1&cap=${encodeURIComponent(ticket)}`)).status).toBe(401);
    clock.advance(-FRAME_TICKET_TTL_MS - 1);
    expect((await onHost(host, `/?v=1&cap=${encodeURIComponent(ticket)}`)).status).toBe(200);
    await h.call('POST', `/api/drops/${drop.slug}/passcode`, { token, body: { passcode: 'a new one' } });
    expect((await onHost(host, `/?v=1&cap=${encodeURIComponent(ticket)}`)).status).toBe(401);
  });

  it('is gone from the expiry instant, like the raw path', async () => {
    const drop = await publish({ expires_at: clock.now() + 120_000 });
    const host = hostOf(drop.content_url);
    expect((await onHost(host)).status).toBe(200);
    clock.advance(120_000);
    const gone = await onHost(host);
    expect(gone.status).toBe(410);
    expect(gone.text).not.toContain('secret body');
    clock.advance(-120_000);
  });
});

describe('the fast path', () => {
  it('answers a content host from the cache with the same bytes, and never a /p/ URL on a content host', async () => {
    const port = await freePort();
    await h.app.listen({ port, host: '127.0.0.1' });
    const drop = await publish({ html: page('fast bytes') });
    const host = hostOf(drop.content_url);
    const get = (path: string, hostHeader: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.get({ host: '127.0.0.1', port, path, headers: { host: hostHeader } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        request.on('error', reject);
      });
    const raw = await get(`/p/${drop.slug}/raw`, 'localhost:8787');
    const label = host.split('.')[0] ?? '';
    expect(h.services.rawCache.get({ label }, undefined)).toBeUndefined();
    const miss = await get('/', host);
    expect(miss.status).toBe(200);
    // Kept under the label: the next request is a fast-path hit (serve/fast-path.test.ts shows which side answers).
    expect(h.services.rawCache.get({ label }, undefined)).toBeDefined();
    const hit = await get('/', host);
    expect(hit.body).toBe(miss.body);
    expect(hit.body).toBe(raw.body);
    // The raw URL is cached now, but a content host asking for it gets the content host's 404.
    const crossed = await get(`/p/${drop.slug}/raw`, host);
    expect(crossed.status).toBe(404);
    expect(crossed.body).not.toContain('fast bytes');
  });
});

describe('the viewer', () => {
  it('frames the drop on its own origin, with allow-same-origin, and allows only that frame', async () => {
    const drop = await publish();
    const viewer = await h.call('GET', `/p/${drop.slug}`);
    const frame = /<iframe[^>]*>/.exec(viewer.text)?.[0] ?? '';
    expect(frame).toContain(`src="${drop.content_url}v/1/"`);
    expect(frame).toContain(
      'sandbox="allow-scripts allow-forms allow-popups allow-modals allow-downloads allow-same-origin"',
    );
    expect(String(viewer.headers['content-security-policy'])).toContain(
      `frame-src ${drop.content_url.replace(/\/$/, '')};`,
    );
  });
});

describe('a drop without a content label', () => {
  it('(made by an instance older than migration 0008 during an upgrade) is served on the raw path alone', async () => {
    const accountId = (await h.call('GET', '/api/me', { token })).json.user_id as string;
    await h.store.createDrop(
      {
        slug: 'unlabelled01',
        accountId,
        title: 'Old instance',
        description: null,
        html: page('from an old instance'),
        sizeBytes: 100,
        context: null,
        metadata: {},
        passcodeHash: null,
        // What an older instance's insert leaves in the column.
        contentLabel: null as unknown as string,
        now: clock.now(),
      },
      500,
    );
    expect((await h.call('GET', '/api/drops/unlabelled01', { token })).json.content_url).toBeNull();
    const viewer = await h.call('GET', '/p/unlabelled01');
    const frame = /<iframe[^>]*>/.exec(viewer.text)?.[0] ?? '';
    expect(frame).toContain('src="/p/unlabelled01/raw/v/1/"');
    expect(frame).not.toContain('allow-same-origin');
    expect((await h.call('GET', '/p/unlabelled01/raw')).text).toContain('from an old instance');
  });
});

describe('configuration', () => {
  it('falls back to the opaque raw frame when the content origin is off', async () => {
    const off = await createHarness({ env: { HTMLDROP_BASE_URL: SERVICE, HTMLDROP_CONTENT_ORIGIN: 'off' } });
    try {
      const t = await off.token();
      const created = await off.call('POST', '/api/drops', { token: t, body: { title: 't', html: page() } });
      expect(created.json.content_url).toBeNull();
      const viewer = await off.call('GET', `/p/${created.json.slug}`);
      const frame = /<iframe[^>]*>/.exec(viewer.text)?.[0] ?? '';
      expect(frame).toContain(`src="/p/${created.json.slug}/raw/v/1/"`);
      expect(frame).not.toContain('allow-same-origin');
      // With no content origin, no Host is a content host.
      const host = `${'a'.repeat(20)}.localhost:8787`;
      expect((await off.call('GET', '/api/me', { token: t, headers: { host } })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

describe('HTMLDROP_CONTENT_ORIGIN', () => {
  const origin = (env: Record<string, string>) =>
    loadConfig({ HTMLDROP_DATA_DIR: '/tmp/unused', ...env }).contentOrigin;

  it('defaults to {id}.localhost on the base URL port when the service and its base URL are on loopback', () => {
    expect(origin({ PORT: '9000' })).toBe('http://{id}.localhost:9000');
    expect(origin({ HTMLDROP_BASE_URL: 'http://127.0.0.1:4000' })).toBe('http://{id}.localhost:4000');
    // Behind a public base URL, or on a public HOST, there is no default: the operator sets a content domain.
    expect(origin({ HTMLDROP_BASE_URL: 'https://drops.example.com' })).toBeUndefined();
    expect(origin({ HOST: '0.0.0.0', HTMLDROP_ALLOW_LOCAL_AUTH: '1' })).toBeUndefined();
    expect(origin({ HTMLDROP_CONTENT_ORIGIN: 'off' })).toBeUndefined();
  });

  it('takes <scheme>://{id}.<domain>[:port] and refuses anything else with a one-line reason', () => {
    expect(
      origin({
        HTMLDROP_BASE_URL: 'https://drops.example.com',
        HTMLDROP_CONTENT_ORIGIN: 'https://{id}.example-usercontent.net/',
      }),
    ).toBe('https://{id}.example-usercontent.net');
    for (const bad of [
      'https://example-usercontent.net',
      'https://x{id}.example-usercontent.net',
      'https://a.{id}.example-usercontent.net',
      'https://{id}.example-usercontent.net/path',
      'ftp://{id}.example-usercontent.net',
      '{id}.example-usercontent.net',
    ]) {
      expect(() => origin({ HTMLDROP_CONTENT_ORIGIN: bad }), bad).toThrow(/HTMLDROP_CONTENT_ORIGIN/);
    }
    // Drops under the service's own name could set its cookies.
    for (const content of ['https://{id}.drops.example.com', 'https://{id}.u.drops.example.com']) {
      expect(() =>
        origin({ HTMLDROP_BASE_URL: 'https://drops.example.com', HTMLDROP_CONTENT_ORIGIN: content }),
      ).toThrow(/could set its cookies/);
    }
    // The service's own host must never be a content host.
    expect(() =>
      origin({ HTMLDROP_BASE_URL: 'https://app.drops.example', HTMLDROP_CONTENT_ORIGIN: 'https://{id}.drops.example' }),
    ).toThrow(/would be a content host/);
  });
});

describe('migration 0008', () => {
  it('gives every drop made before it its own content label, also to slugs that differ only by case', async () => {
    const database = await createTestDatabase();
    const opened = await openAtMigration(database, '0007-history');
    try {
      // Drops as the version before this one stored them, including two slugs that differ only by case.
      const db = opened as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await db
        .insertInto('accounts')
        .values({ id: 'u_old', provider: 'local', subject: 'old', login: 'old', created_at: 1, drop_count: 0 })
        .execute();
      const slugs = ['CaseSlug01', 'caseslug01', ...Array.from({ length: 1200 }, (_, i) => `old${i}`)];
      for (let i = 0; i < slugs.length; i += 400) {
        await db
          .insertInto('drops')
          .values(
            slugs.slice(i, i + 400).map((slug) => ({
              slug,
              account_id: 'u_old',
              title: 't',
              description: null,
              passcode_hash: null,
              latest_version: 1,
              last_issued_version: 1,
              version_count: 1,
              metadata: '{}',
              created_at: 1,
              updated_at: 1,
            })),
          )
          .execute();
      }
      const store = database.open();
      await store.migrate();
      const found = await Promise.all(slugs.map((slug) => store.findDrop(slug)));
      await store.close();
      const labels = found.map((drop) => drop?.contentLabel);
      expect(labels.every((label) => /^[0-9a-z]{20}$/.test(label ?? ''))).toBe(true);
      expect(new Set(labels).size).toBe(slugs.length);
      expect(found.every((drop) => drop?.network === 'open')).toBe(true);
    } finally {
      await opened.destroy();
      await database.drop();
    }
  });
});

describe('the start-up hint about one site', () => {
  it('names the service host when the content domain looks like the same site, and nothing otherwise', () => {
    const hint = (baseUrl: string, contentOrigin: string | undefined) => mayShareSite({ baseUrl, contentOrigin });
    expect(hint('https://drops.example.com', 'https://{id}.u.example.com')).toBe('drops.example.com');
    expect(hint('https://drops.example.com', 'https://{id}.example-usercontent.net')).toBeUndefined();
    expect(hint('http://localhost:8787', 'http://{id}.localhost:8787')).toBeUndefined();
    expect(hint('https://drops.example.com', undefined)).toBeUndefined();
  });
});
