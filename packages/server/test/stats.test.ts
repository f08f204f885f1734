/**
 * Read receipts, GET /api/drops/<slug>/stats (docs/api.md 4.3 and "Read receipts"): views as view_count counts them,
 * distinct viewers per UTC day, per version, batched like view_count, across instances, and the owner-only refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './databases.js';
import { buildTestApp, createHarness, createTestClock, type Harness, page, type TestClock } from './helpers.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0';
const DAY_MS = 86_400_000;

let h: Harness;
let clock: TestClock;
let owner: string;

beforeAll(async () => {
  clock = createTestClock();
  h = await createHarness({ clock, limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  owner = await h.token('owner');
});
afterAll(() => h.close());

/** A drop with `versions` versions. */
async function publish(versions = 1, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await h.call('POST', '/api/drops', { token: owner, body: { title: 't', html: page(), ...extra } });
  expect(created.status, created.text).toBe(201);
  const { slug } = created.json;
  for (let n = 2; n <= versions; n++) {
    expect((await h.call('PUT', `/api/drops/${slug}`, { token: owner, body: { html: page(`v${n}`) } })).status).toBe(
      200,
    );
  }
  return slug;
}

interface RenderOptions {
  readonly ip?: string;
  readonly ua?: string;
  readonly v?: number;
  readonly method?: 'GET' | 'HEAD';
  readonly headers?: Record<string, string>;
  readonly app?: Harness['app'];
}

/** One visit of the viewer page from a client. */
async function render(slug: string, options: RenderOptions = {}): Promise<number> {
  const reply = await (options.app ?? h.app).inject({
    method: options.method ?? 'GET',
    url: `/p/${slug}${options.v === undefined ? '' : `?v=${options.v}`}`,
    remoteAddress: options.ip ?? '192.0.2.1',
    headers: { 'user-agent': options.ua ?? UA, ...options.headers },
  });
  return reply.statusCode;
}

const stats = async (slug: string, token = owner) => h.call('GET', `/api/drops/${slug}/stats`, { token });
const viewCount = async (slug: string) => (await h.call('GET', `/api/drops/${slug}`, { token: owner })).json.view_count;
const unviewed = (version: number) => ({ version, views: 0, unique_viewers: 0, last_viewed_at: null });

describe('GET /api/drops/<slug>/stats', () => {
  it('answers zeros and nulls for every version of a drop never viewed', async () => {
    const slug = await publish(2);
    const reply = await stats(slug);
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.json).toEqual({
      links: [],
      views: 0,
      unique_viewers: 0,
      first_viewed_at: null,
      last_viewed_at: null,
      versions: [unviewed(2), unviewed(1)],
    });
  });

  it('counts N renders from M clients, per version shown, with first and last render times, once flushed', async () => {
    const slug = await publish(3);
    const t0 = clock.now();
    expect(await render(slug, { ip: '192.0.2.1' })).toBe(200);
    clock.advance(1000);
    expect(await render(slug, { ip: '192.0.2.2' })).toBe(200);
    expect(await render(slug, { ip: '192.0.2.1' })).toBe(200);
    clock.advance(1000);
    expect(await render(slug, { ip: '192.0.2.1', v: 1 })).toBe(200);
    // Same address, another browser: another viewer.
    expect(await render(slug, { ip: '192.0.2.1', ua: 'curl/8.5.0', v: 1 })).toBe(200);
    clock.advance(1000);
    expect(await render(slug, { ip: '192.0.2.3', v: 3 })).toBe(200);
    // Not views: HEAD, the raw document, a version that does not exist.
    expect(await render(slug, { method: 'HEAD', ip: '192.0.2.9' })).toBe(200);
    expect((await h.app.inject({ url: `/p/${slug}/raw`, remoteAddress: '192.0.2.9' })).statusCode).toBe(200);
    expect(await render(slug, { ip: '192.0.2.9', v: 7 })).toBe(404);

    // Batched like view_count: nothing before the flush.
    expect((await stats(slug)).json.views).toBe(0);
    await h.services.flushCounters();
    expect((await stats(slug)).json).toEqual({
      links: [],
      views: 6,
      unique_viewers: 4,
      first_viewed_at: t0,
      last_viewed_at: t0 + 3000,
      versions: [
        { version: 3, views: 4, unique_viewers: 3, last_viewed_at: t0 + 3000 },
        unviewed(2),
        { version: 1, views: 2, unique_viewers: 2, last_viewed_at: t0 + 2000 },
      ],
    });
    expect(await viewCount(slug)).toBe(6);
  });

  it('counts a returning client again on the next UTC day, and once within a day', async () => {
    const slug = await publish();
    const midnight = Math.ceil(clock.now() / DAY_MS) * DAY_MS;
    clock.set(midnight - 60_000);
    await render(slug);
    clock.set(midnight - 1);
    await render(slug);
    clock.set(midnight);
    await render(slug);
    clock.set(midnight + 3_600_000);
    await render(slug);
    await h.services.flushCounters();
    const reply = (await stats(slug)).json;
    expect(reply).toMatchObject({ views: 4, unique_viewers: 2, first_viewed_at: midnight - 60_000 });
    expect(reply.versions).toEqual([{ version: 1, views: 4, unique_viewers: 2, last_viewed_at: midnight + 3_600_000 }]);
  });

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    const slug = await publish();
    await render(slug, { ip: '2001:db8:7:8::1' });
    await render(slug, { ip: '2001:db8:7:8:ffff::2' });
    await render(slug, { ip: '2001:db8:7:9::1' });
    await h.services.flushCounters();
    expect((await stats(slug)).json).toMatchObject({ views: 3, unique_viewers: 2 });
  });

  it('counts a locked drop only when the viewer is shown, not the passcode gate', async () => {
    const slug = await publish(1, { passcode: 'open sesame' });
    expect(await render(slug)).toBe(200);
    await h.services.flushCounters();
    expect((await stats(slug)).json.views).toBe(0);
    const unlocked = await h.app.inject({
      method: 'POST',
      url: `/p/${slug}/unlock`,
      remoteAddress: '192.0.2.1',
      payload: 'passcode=open%20sesame',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(unlocked.statusCode).toBe(303);
    const cookie = String(unlocked.headers['set-cookie']).split(';')[0] ?? '';
    expect(await render(slug, { headers: { cookie } })).toBe(200);
    await h.services.flushCounters();
    expect((await stats(slug)).json).toMatchObject({ views: 1, unique_viewers: 1 });
  });

  it("removes a deleted version's stats and keeps the drop's totals equal to view_count", async () => {
    const slug = await publish(2);
    await render(slug, { ip: '192.0.2.1', v: 1 });
    await render(slug, { ip: '192.0.2.2', v: 2 });
    await h.services.flushCounters();
    expect((await h.call('DELETE', `/api/drops/${slug}/v/1`, { token: owner })).status).toBe(200);
    // Rendered after the version is gone: the latest is shown; a render of v1 flushed late would be dropped.
    await render(slug, { ip: '192.0.2.3' });
    await h.services.flushCounters();
    const reply = (await stats(slug)).json;
    expect(reply).toMatchObject({ views: 3, unique_viewers: 3 });
    expect(reply.versions).toEqual([{ version: 2, views: 2, unique_viewers: 2, last_viewed_at: expect.any(Number) }]);
    expect(await viewCount(slug)).toBe(3);

    expect((await h.call('DELETE', `/api/drops/${slug}`, { token: owner })).status).toBe(204);
    expect((await stats(slug)).json.error.code).toBe('not_found');
  });

  it('adds up renders served by two instances on one database', async () => {
    const slug = await publish();
    // A second instance: its own store and app on the same database and secret, as another process would be.
    const store = h.openStore();
    const { app: other, services: otherServices } = await buildTestApp({ config: h.config, store, clock });
    try {
      await render(slug, { ip: '192.0.2.1' });
      await render(slug, { ip: '192.0.2.1', app: other });
      await render(slug, { ip: '192.0.2.2', app: other });
      // On PostgreSQL the two flush at once; SQLite has one writer per database (and one instance per database).
      if (TEST_DIALECT === 'postgres') await Promise.all([h.services.flushCounters(), otherServices.flushCounters()]);
      else await h.services.flushCounters().then(() => otherServices.flushCounters());
      expect((await stats(slug)).json).toMatchObject({ views: 3, unique_viewers: 2 });
      expect(await viewCount(slug)).toBe(3);
    } finally {
      await other.close();
      await store.close();
    }
  });

  describe('refuses', () => {
    let slug: string;
    beforeAll(async () => {
      slug = await publish();
    });

    it("404 not_found for an unknown drop, 403 forbidden for another account's, 400 invalid_slug for a bad slug", async () => {
      const unknown = await stats('NoSuchDrop');
      expect([unknown.status, unknown.json.error.code]).toEqual([404, 'not_found']);
      const foreign = await stats(slug, await h.token('stranger'));
      expect([foreign.status, foreign.json.error.code]).toEqual([403, 'forbidden']);
      const bad = await stats('a.b');
      expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_slug']);
    });

    it('401 without a token, with a malformed token and with a revoked token', async () => {
      const revoked = await h.token('owner', 'to revoke');
      const id = (await h.call('GET', '/api/me', { token: revoked })).json.token.id;
      expect((await h.call('DELETE', `/api/tokens/${id}`, { token: owner })).status).toBe(204);
      for (const [headers, code] of [
        [{}, 'unauthorized'],
        [{ authorization: 'Bearer not-a-token' }, 'invalid_token'],
        [{ authorization: `Bearer ${revoked}` }, 'invalid_token'],
      ] as const) {
        const reply = await h.call('GET', `/api/drops/${slug}/stats`, { headers });
        expect([reply.status, reply.json.error.code]).toEqual([401, code]);
      }
    });
  });
});

describe('behind a trusted proxy', () => {
  let proxied: Harness;
  beforeAll(async () => {
    proxied = await createHarness({ env: { HTMLDROP_TRUST_PROXY: '1' } });
  });
  afterAll(() => proxied.close());

  it('tells viewers apart by X-Forwarded-For, as every per-address rule does', async () => {
    const token = await proxied.token('owner');
    const { slug } = (await proxied.call('POST', '/api/drops', { token, body: { title: 't', html: page() } })).json;
    for (const forwardedFor of ['198.51.100.1', '198.51.100.2', '198.51.100.1']) {
      const reply = await proxied.app.inject({
        url: `/p/${slug}`,
        remoteAddress: '10.0.0.2',
        headers: { 'user-agent': UA, 'x-forwarded-for': forwardedFor },
      });
      expect(reply.statusCode).toBe(200);
    }
    await proxied.services.flushCounters();
    const reply = await proxied.call('GET', `/api/drops/${slug}/stats`, { token });
    expect(reply.json).toMatchObject({ views: 3, unique_viewers: 2 });
  });
});
