/**
 * History and safe writers (docs/api.md, "History and safe writers"): ETag and If-Match, restore, idempotency keys
 * and expiry, on the suite's database (SQLite, and PostgreSQL in the postgres project). The same races across three
 * processes are in scale/multi-instance.test.ts; the diff endpoint has its own suite.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_LEASE_MS } from '../src/http/idempotency.js';
import { createHarness, createTestClock, type Harness, page, type TestClock } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let clock: TestClock;
let alice: string;
let bob: string;

beforeAll(async () => {
  clock = createTestClock();
  h = await createHarness({ clock, limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  alice = await h.token('alice');
  bob = await h.token('bob');
});
afterAll(() => h.close());

async function create(body: Record<string, unknown> = {}, token = alice) {
  const reply = await h.call('POST', '/api/drops', { token, body: { title: 'Report', html: page('v1'), ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { slug: string; latest_version: number; expires_at: number | null };
}

const versionsOf = async (slug: string) =>
  (await h.call('GET', `/api/drops/${slug}/versions`, { token: alice })).json as Array<{ version: number }>;

describe('ETag and If-Match', () => {
  it('puts the latest version in the ETag of every single-drop answer', async () => {
    const { slug } = await create({ passcode: 'abcd' });
    const etagOf = async (method: string, url: string, body?: unknown) => {
      const reply = await h.call(method, url, { token: alice, ...(body === undefined ? {} : { body }) });
      expect(reply.status, `${method} ${url}: ${reply.text}`).toBe(200);
      return reply.headers.etag;
    };
    expect(await etagOf('GET', `/api/drops/${slug}`)).toBe('"1"');
    expect(await etagOf('PUT', `/api/drops/${slug}`, { html: page('v2') })).toBe('"2"');
    expect(await etagOf('PATCH', `/api/drops/${slug}`, { title: 'renamed' })).toBe('"2"');
    expect(await etagOf('POST', `/api/drops/${slug}/passcode`, { passcode: '' })).toBe('"2"');
    expect(await etagOf('POST', `/api/drops/${slug}/v/1/restore`)).toBe('"3"');
    expect(await etagOf('DELETE', `/api/drops/${slug}/v/3`)).toBe('"2"');
  });

  it('refuses a stale If-Match with 412 version_conflict naming the latest version, and changes nothing', async () => {
    const { slug } = await create();
    await h.call('PUT', `/api/drops/${slug}`, { token: alice, body: { html: page('v2') } });
    const before = (await h.call('GET', `/api/drops/${slug}`, { token: alice })).json;
    const stale = { 'if-match': '"1"' };
    const writes: Array<[string, string, unknown]> = [
      ['PUT', `/api/drops/${slug}`, { html: page('lost') }],
      ['PATCH', `/api/drops/${slug}`, { title: 'lost' }],
      ['POST', `/api/drops/${slug}/v/1/restore`, undefined],
      ['DELETE', `/api/drops/${slug}`, undefined],
    ];
    for (const [method, url, body] of writes) {
      const reply = await h.call(method, url, { token: alice, headers: stale, ...(body ? { body } : {}) });
      expect(reply.status, `${method} ${url}`).toBe(412);
      expect(reply.json.error.code).toBe('version_conflict');
      expect(reply.json.error.details.latest_version).toBe(2);
    }
    expect((await h.call('GET', `/api/drops/${slug}`, { token: alice })).json).toEqual(before);
    expect(await versionsOf(slug)).toHaveLength(2);
  });

  it('honours a current If-Match and * ("exists")', async () => {
    const { slug } = await create();
    const put = await h.call('PUT', `/api/drops/${slug}`, {
      token: alice,
      headers: { 'if-match': '"1"' },
      body: { html: page('v2') },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json.latest_version).toBe(2);
    const patch = await h.call('PATCH', `/api/drops/${slug}`, {
      token: alice,
      headers: { 'if-match': '*' },
      body: { title: 'any' },
    });
    expect(patch.status).toBe(200);
    const gone = await h.call('DELETE', `/api/drops/${slug}`, { token: alice, headers: { 'if-match': '"2"' } });
    expect(gone.status).toBe(204);
    const missing = await h.call('PATCH', `/api/drops/${slug}`, {
      token: alice,
      headers: { 'if-match': '*' },
      body: { title: 'x' },
    });
    expect(missing.status).toBe(404);
  });

  it('answers a malformed If-Match with 400 invalid_arg and changes nothing', async () => {
    const { slug } = await create();
    for (const value of ['W/"1"', '1', '"abc"', '"1", "2"', '"0"', '"99999999999"', '']) {
      const reply = await h.call('PUT', `/api/drops/${slug}`, {
        token: alice,
        headers: { 'if-match': value },
        body: { html: page('no') },
      });
      expect(reply.status, value).toBe(400);
      expect(reply.json.error).toMatchObject({ code: 'invalid_arg', details: { field: 'If-Match' } });
    }
    expect(await versionsOf(slug)).toHaveLength(1);
  });

  it('lets exactly one of ten concurrent writers with the same If-Match win', async () => {
    const { slug } = await create();
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.call('PUT', `/api/drops/${slug}`, {
          token: alice,
          headers: { 'if-match': '"1"' },
          body: { html: page(`writer ${i}`) },
        }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(412)]);
    expect(await versionsOf(slug)).toHaveLength(2);
  });

  it("keeps the spec's behaviour without If-Match: every PUT is a new version", async () => {
    const { slug } = await create();
    await Promise.all(
      [1, 2, 3].map((i) => h.call('PUT', `/api/drops/${slug}`, { token: alice, body: { html: page(`${i}`) } })),
    );
    expect(await versionsOf(slug)).toHaveLength(4);
  });
});

describe('POST /api/drops/<slug>/v/<n>/restore', () => {
  it("appends a new version with version n's html and context, keeping the details", async () => {
    const { slug } = await create({ context: 'first reasoning' });
    await h.call('PUT', `/api/drops/${slug}`, { token: alice, body: { html: page('v2'), title: 'Second' } });
    const restored = await h.call('POST', `/api/drops/${slug}/v/1/restore`, { token: alice });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.json).toMatchObject({ latest_version: 3, title: 'Second' });
    const v3 = await h.call('GET', `/api/drops/${slug}/v/3`, { token: alice });
    expect(v3.json).toMatchObject({ context: 'first reasoning', is_latest: true });
    const raw = await h.call('GET', `/p/${slug}/raw`);
    expect(raw.text).toContain('<p>v1</p>');
  });

  it('answers 404 version_not_found, 400 for a bad number, 403 on a foreign drop', async () => {
    const { slug } = await create();
    const unknown = await h.call('POST', `/api/drops/${slug}/v/9/restore`, { token: alice });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'version_not_found']);
    const bad = await h.call('POST', `/api/drops/${slug}/v/x/restore`, { token: alice });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_arg']);
    const foreign = await h.call('POST', `/api/drops/${slug}/v/1/restore`, { token: bob });
    expect([foreign.status, foreign.json.error.code]).toEqual([403, 'forbidden']);
    expect(await versionsOf(slug)).toHaveLength(1);
  });

  it('is a write under the version cap', async () => {
    const capped = await createHarness({ limits: { maxVersionsPerDrop: 2 } });
    try {
      const token = await capped.token('carol');
      const created = await capped.call('POST', '/api/drops', { token, body: { title: 't', html: page() } });
      const slug = created.json.slug;
      expect((await capped.call('POST', `/api/drops/${slug}/v/1/restore`, { token })).status).toBe(200);
      const full = await capped.call('POST', `/api/drops/${slug}/v/1/restore`, { token });
      expect([full.status, full.json.error.code]).toEqual([409, 'version_limit_reached']);
    } finally {
      await capped.close();
    }
  });
});

describe('Idempotency-Key', () => {
  const keyed = (key: string) => ({ 'idempotency-key': key });

  it('replays the first success for a repeat with the same body, creating nothing', async () => {
    const body = { title: 'Once', html: page('once'), metadata: { run: 'replay' } };
    const first = await h.call('POST', '/api/drops', { token: alice, headers: keyed('create-1'), body });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await h.call('POST', '/api/drops', { token: alice, headers: keyed('create-1'), body });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.etag).toBe('"1"');
    expect(again.text).toBe(first.text);
    const list = await h.call('GET', '/api/drops?metadata.run=replay', { token: alice });
    expect(list.json.pagination.total_items).toBe(1);
  });

  it('refuses the key with another body (422 idempotency_key_reused), per account', async () => {
    await h.call('POST', '/api/drops', {
      token: alice,
      headers: keyed('k-reused'),
      body: { title: 'a', html: page() },
    });
    const other = await h.call('POST', '/api/drops', {
      token: alice,
      headers: keyed('k-reused'),
      body: { title: 'b', html: page() },
    });
    expect([other.status, other.json.error.code]).toEqual([422, 'idempotency_key_reused']);
    // Another account's key of the same name is its own.
    const bobs = await h.call('POST', '/api/drops', {
      token: bob,
      headers: keyed('k-reused'),
      body: { title: 'b', html: page() },
    });
    expect(bobs.status).toBe(201);
  });

  it('creates one drop from 20 concurrent retries of one create', async () => {
    const body = { title: 'Race', html: page('race'), metadata: { run: 'race' } };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => h.call('POST', '/api/drops', { token: alice, headers: keyed('race-1'), body })),
    );
    for (const reply of replies) expect([201, 409], reply.text).toContain(reply.status);
    for (const reply of replies.filter((r) => r.status === 409)) {
      expect(reply.json.error.code).toBe('request_in_progress');
      // The seconds until the running claim would lapse: the whole lease, the clock standing still here.
      expect(reply.headers['retry-after']).toBe(String(IDEMPOTENCY_LEASE_MS / 1000));
      expect(reply.json.error.details.retry_after_seconds).toBe(IDEMPOTENCY_LEASE_MS / 1000);
    }
    const slugs = new Set(replies.filter((r) => r.status === 201).map((r) => r.json.slug));
    expect(slugs.size).toBe(1);
    const list = await h.call('GET', '/api/drops?metadata.run=race', { token: alice });
    expect(list.json.pagination.total_items).toBe(1);
  });

  it('replays a PUT without adding a version; another path with the same key is a reuse', async () => {
    const { slug } = await create();
    const put = () =>
      h.call('PUT', `/api/drops/${slug}`, { token: alice, headers: keyed('put-1'), body: { html: page('2') } });
    const first = await put();
    const second = await put();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers.etag).toBe('"2"');
    expect(await versionsOf(slug)).toHaveLength(2);
    const { slug: other } = await create();
    const elsewhere = await h.call('PUT', `/api/drops/${other}`, {
      token: alice,
      headers: keyed('put-1'),
      body: { html: page('2') },
    });
    expect(elsewhere.status).toBe(422);
  });

  it('keeps no error: a refused request can be retried with the same key', async () => {
    const missingTitle = await h.call('POST', '/api/drops', {
      token: alice,
      headers: keyed('after-error'),
      body: { html: page() },
    });
    expect(missingTitle.status).toBe(400);
    const { slug } = await create();
    const conflict = await h.call('PUT', `/api/drops/${slug}`, {
      token: alice,
      headers: { ...keyed('after-412'), 'if-match': '"7"' },
      body: { html: page('x') },
    });
    expect(conflict.status).toBe(412);
    const retried = await h.call('PUT', `/api/drops/${slug}`, {
      token: alice,
      headers: { ...keyed('after-412'), 'if-match': '"1"' },
      body: { html: page('x') },
    });
    expect(retried.status).toBe(200);
  });

  it('refuses a malformed key with 400 invalid_arg and creates nothing', async () => {
    const before = (await h.call('GET', '/api/drops', { token: alice })).json.pagination.total_items;
    for (const key of ['x'.repeat(256), 'with space', 'tab\there', 'é']) {
      const reply = await h.call('POST', '/api/drops', {
        token: alice,
        headers: { 'idempotency-key': key },
        body: { title: 't', html: page() },
      });
      expect(reply.status, key).toBe(400);
      expect(reply.json.error).toMatchObject({ code: 'invalid_arg', details: { field: 'Idempotency-Key' } });
    }
    expect((await h.call('GET', '/api/drops', { token: alice })).json.pagination.total_items).toBe(before);
    const longest = await h.call('POST', '/api/drops', {
      token: alice,
      headers: keyed('k'.repeat(255)),
      body: { title: 't', html: page() },
    });
    expect(longest.status).toBe(201);
  });

  it('forgets a key after 24 hours', async () => {
    await h.call('POST', '/api/drops', { token: alice, headers: keyed('day'), body: { title: 'a', html: page() } });
    clock.advance(24 * 3_600_000 + 1);
    const later = await h.call('POST', '/api/drops', {
      token: alice,
      headers: keyed('day'),
      body: { title: 'b', html: page() },
    });
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });

  it('takes over a running claim whose lease lapsed, only for the same request', async () => {
    const ref = { accountId: 'u_lease', key: 'lease' };
    const now = clock.now();
    const times = { now, leaseUntil: now + 1000, expiresAt: now + 86_400_000 };
    expect((await h.store.claimIdempotencyKey(ref, 'fp-1', times)).kind).toBe('claimed');
    expect((await h.store.claimIdempotencyKey(ref, 'fp-1', times)).kind).toBe('in_progress');
    const later = { ...times, now: now + 1000 };
    expect((await h.store.claimIdempotencyKey(ref, 'fp-2', later)).kind).toBe('reused');
    expect((await h.store.claimIdempotencyKey(ref, 'fp-1', later)).kind).toBe('claimed');
    await h.store.completeIdempotencyKey(ref, { status: 201, body: '{}', etag: null });
    expect(await h.store.claimIdempotencyKey(ref, 'fp-1', later)).toEqual({
      kind: 'replay',
      answer: { status: 201, body: '{}', etag: null },
    });
  });

  it('renews a running claim only for its own request, and reports its lease to a repeat', async () => {
    const ref = { accountId: 'u_renew', key: 'renew' };
    const now = clock.now();
    const times = { now, leaseUntil: now + 1000, expiresAt: now + 86_400_000 };
    expect((await h.store.claimIdempotencyKey(ref, 'fp-1', times)).kind).toBe('claimed');
    expect(await h.store.claimIdempotencyKey(ref, 'fp-1', times)).toEqual({
      kind: 'in_progress',
      leaseUntil: now + 1000,
    });
    expect(await h.store.renewIdempotencyKey(ref, 'fp-2', now + 5000)).toBe(false);
    expect(await h.store.renewIdempotencyKey(ref, 'fp-1', now + 5000)).toBe(true);
    // Renewed: no longer lapsed at the first lease's end.
    const then = { ...times, now: now + 1000 };
    expect(await h.store.claimIdempotencyKey(ref, 'fp-1', then)).toEqual({
      kind: 'in_progress',
      leaseUntil: now + 5000,
    });
    await h.store.completeIdempotencyKey(ref, { status: 201, body: '{}', etag: null });
    expect(await h.store.renewIdempotencyKey(ref, 'fp-1', now + 9000)).toBe(false);
  });

  it('a claim left by a crashed instance holds its key only until its lease lapses, and says so', async () => {
    const body = { title: 'After a crash', html: page('crash'), metadata: { run: 'crashed' } };
    // The same request's claim, as an instance that stopped mid-request left it: running, leased from now (the
    // fingerprint as http/idempotency.ts takes it: method, route, parameters, the body's SHA-256).
    const account = (await h.call('GET', '/api/me', { token: alice })).json.user_id as string;
    const ref = { accountId: account, key: 'crashed-2' };
    const now = clock.now();
    const digest = createHash('sha256').update(JSON.stringify(body)).digest('base64url');
    const fingerprint = `POST /api/drops {} ${digest}`;
    const times = { now, leaseUntil: now + IDEMPOTENCY_LEASE_MS, expiresAt: now + 86_400_000 };
    expect((await h.store.claimIdempotencyKey(ref, fingerprint, times)).kind).toBe('claimed');
    clock.advance(4_000);
    const waiting = await h.call('POST', '/api/drops', { token: alice, headers: keyed('crashed-2'), body });
    expect([waiting.status, waiting.json.error.code]).toEqual([409, 'request_in_progress']);
    expect(waiting.headers['retry-after']).toBe(String(IDEMPOTENCY_LEASE_MS / 1000 - 4));
    clock.advance((IDEMPOTENCY_LEASE_MS / 1000 - 4) * 1000);
    const retried = await h.call('POST', '/api/drops', { token: alice, headers: keyed('crashed-2'), body });
    expect(retried.status, retried.text).toBe(201);
    const list = await h.call('GET', '/api/drops?metadata.run=crashed', { token: alice });
    expect(list.json.pagination.total_items).toBe(1);
  });
});

describe('Idempotency-Key and the write limit', () => {
  it('does not count replays as writes', async () => {
    const limited = await createHarness({ limits: { maxWritesPerMinute: 2, maxWritesPerDay: 100 } });
    try {
      const token = await limited.token('dave');
      const body = { title: 't', html: page() };
      const send = () => limited.call('POST', '/api/drops', { token, headers: { 'idempotency-key': 'once' }, body });
      for (let i = 0; i < 5; i += 1) expect((await send()).status).toBe(201);
      const second = await limited.call('POST', '/api/drops', { token, body });
      expect(second.status).toBe(201);
      const third = await limited.call('POST', '/api/drops', { token, body });
      expect(third.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('expires_at', () => {
  const HOUR = 3_600_000;

  it('is null by default and accepted between now + 60 s and now + 365 days', async () => {
    expect((await create()).expires_at).toBeNull();
    const now = clock.now();
    for (const bad of [now - 1, now + 59_999, now + 365 * 24 * HOUR + 1, 1.5, '1', true]) {
      const reply = await h.call('POST', '/api/drops', {
        token: alice,
        body: { title: 't', html: page(), expires_at: bad },
      });
      expect(reply.status, String(bad)).toBe(400);
      expect(reply.json.error.code).toBe('invalid_arg');
    }
    expect((await create({ expires_at: now + 60_000 })).expires_at).toBe(now + 60_000);
    expect((await create({ expires_at: now + 365 * 24 * HOUR })).expires_at).toBe(now + 365 * 24 * HOUR);
  });

  it('is changed by PATCH (null clears) and refused on PUT', async () => {
    const { slug } = await create();
    const at = clock.now() + HOUR;
    const set = await h.call('PATCH', `/api/drops/${slug}`, { token: alice, body: { expires_at: at } });
    expect(set.json.expires_at).toBe(at);
    const past = await h.call('PATCH', `/api/drops/${slug}`, { token: alice, body: { expires_at: clock.now() } });
    expect([past.status, past.json.error.details.field]).toEqual([400, 'expires_at']);
    const cleared = await h.call('PATCH', `/api/drops/${slug}`, { token: alice, body: { expires_at: null } });
    expect(cleared.json.expires_at).toBeNull();
    const put = await h.call('PUT', `/api/drops/${slug}`, { token: alice, body: { html: page(), expires_at: at } });
    expect([put.status, put.json.error.code]).toEqual([400, 'invalid_arg']);
    expect(await versionsOf(slug)).toHaveLength(1);
  });

  it('caps cache lifetimes at the time left, then answers 410 pages and API 404s from the instant', async () => {
    const expiresAt = clock.now() + HOUR;
    const { slug } = await create({ expires_at: expiresAt });
    expect((await h.call('GET', `/p/${slug}/raw`)).headers['cache-control']).toBe('public, max-age=60, s-maxage=60');
    clock.set(expiresAt - 30_500);
    expect((await h.call('GET', `/p/${slug}/raw`)).headers['cache-control']).toBe('public, max-age=30, s-maxage=30');
    expect((await h.call('GET', `/p/${slug}/raw?v=1`)).headers['cache-control']).toBe('public, max-age=30, immutable');
    clock.set(expiresAt - 1);
    expect((await h.call('GET', `/p/${slug}`)).status).toBe(200);
    clock.set(expiresAt);
    for (const path of [`/p/${slug}`, `/p/${slug}/raw`, `/p/${slug}/raw?v=1`, `/p/${slug}?v=1`]) {
      const reply = await h.call('GET', path);
      expect(reply.status, path).toBe(410);
      expect(reply.headers['content-type']).toContain('text/html');
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.text).toContain('expired');
    }
    for (const path of [
      `/api/drops/${slug}`,
      `/api/drops/${slug}/versions`,
      `/api/drops/${slug}/stats`,
      `/api/drops/${slug}/comments`,
    ]) {
      const reply = await h.call('GET', path, { token: alice });
      expect([reply.status, reply.json.error.code], path).toEqual([404, 'not_found']);
    }
    const put = await h.call('PUT', `/api/drops/${slug}`, { token: alice, body: { html: page() } });
    expect(put.status).toBe(404);
    const listed = (await h.call('GET', '/api/drops?page_size=100', { token: alice })).json.data.map(
      (d: { slug: string }) => d.slug,
    );
    expect(listed).not.toContain(slug);
  });

  it('is purged: the drop, its versions and its quota slot', async () => {
    // Drops of the tests above that expired as their clock moved on.
    await h.services.purge();
    const owner = await h.token('erin');
    const before = (await h.store.findAccountsByLogin('erin'))[0]?.dropCount ?? 0;
    const expiresAt = clock.now() + 2 * 60_000;
    const { slug } = await create({ expires_at: expiresAt }, owner);
    const { slug: kept } = await create({}, owner);
    expect(await h.services.purge()).toBe(0);
    clock.set(expiresAt);
    expect(await h.services.purge()).toBeGreaterThanOrEqual(1);
    expect(await h.store.findDrop(slug)).toBeUndefined();
    expect(await h.store.getVersionContent(slug, 1)).toBeUndefined();
    expect(await h.store.findDrop(kept)).toBeDefined();
    expect((await h.store.findAccountsByLogin('erin'))[0]?.dropCount).toBe(before + 1);
    // A second instance purging at the same time deletes nothing twice.
    expect(await h.services.purge()).toBe(0);
    expect((await h.call('GET', `/p/${slug}`)).status).toBe(404);
  });
});

describe('expiry on the raw fast path', () => {
  it('never serves a cached expiring document past its expiry', async () => {
    const fastClock = createTestClock();
    const { h: served, base } = await serveOnLoopback({ clock: fastClock });
    try {
      const token = await served.token('frank');
      const expiresAt = fastClock.now() + 120_000;
      const created = await served.call('POST', '/api/drops', {
        token,
        body: { title: 't', html: page('soon gone'), expires_at: expiresAt },
      });
      const rawUrl = `${base}/p/${created.json.slug}/raw`;
      const first = await fetch(rawUrl);
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=60');
      await first.text();
      // Now in the cache: the next answer would come from the fast path if it took expiring drops.
      fastClock.set(expiresAt);
      const after = await fetch(rawUrl);
      expect(after.status).toBe(410);
      await after.text();
    } finally {
      await served.close();
    }
  });
});
