import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let alice: string;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  alice = await h.token('alice');
});
afterAll(() => h.close());

async function create(body: Record<string, unknown> = {}, token = alice) {
  const reply = await h.call('POST', '/api/drops', { token, body: { title: 'Report', html: page(), ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json;
}

describe('POST /api/drops', () => {
  it('creates a drop with version 1 and every Drop field', async () => {
    const drop = await create({ description: 'Q3', metadata: { project: 'acme' } });
    expect(drop).toEqual({
      slug: expect.stringMatching(/^[0-9A-Za-z]{10}$/),
      title: 'Report',
      description: 'Q3',
      url: `http://drops.test/p/${drop.slug}`,
      raw_url: `http://drops.test/p/${drop.slug}/raw`,
      locked: false,
      latest_version: 1,
      view_count: 0,
      comments: 'signed_in',
      metadata: { project: 'acme' },
      created_at: expect.any(Number),
      updated_at: drop.created_at,
      expires_at: null,
      network: 'open',
      visibility: 'public',
      allow: [],
      // No content origin on this harness's base URL (http://drops.test): see content-origin.test.ts.
      content_url: null,
    });
  });

  it('answers description "" and metadata {} when they were not given', async () => {
    const drop = await create();
    expect(drop.description).toBe('');
    expect(drop.metadata).toEqual({});
  });

  it('creates a locked drop when a passcode is given, and an open one for ""', async () => {
    expect((await create({ passcode: 'open sesame' })).locked).toBe(true);
    expect((await create({ passcode: '' })).locked).toBe(false);
  });

  it('accepts HTML of exactly the byte limit (multi-byte characters counted in UTF-8)', async () => {
    const html = 'é'.repeat(2_097_152 / 2);
    const drop = await create({ html });
    const version = await h.call('GET', `/api/drops/${drop.slug}/v/1`, { token: alice });
    expect(version.json.size_bytes).toBe(2_097_152);
  });

  it('accepts a JSON body sent without a JSON content type (curl -d)', async () => {
    const reply = await h.call('POST', '/api/drops', {
      token: alice,
      rawBody: JSON.stringify({ title: 't', html: page() }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(201);
  });
});

describe('GET /api/drops/<slug>', () => {
  it('returns the drop', async () => {
    const drop = await create();
    const reply = await h.call('GET', `/api/drops/${drop.slug}`, { token: alice });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(drop);
    expect(reply.headers['cache-control']).toBe('no-store');
  });
});

describe('PUT /api/drops/<slug>', () => {
  it('always creates a new version, also for unchanged HTML, and keeps the slug and url', async () => {
    const drop = await create();
    const v2 = await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page() } });
    expect(v2.status).toBe(200);
    expect(v2.json.latest_version).toBe(2);
    expect(v2.json.url).toBe(drop.url);
    expect(v2.json.updated_at).toBeGreaterThanOrEqual(drop.updated_at);
    const v3 = await h.call('PUT', `/api/drops/${drop.slug}`, {
      token: alice,
      body: { html: page('three'), title: 'New title', description: 'd', context: 'because', metadata: { k: 'v' } },
    });
    expect(v3.json).toMatchObject({ latest_version: 3, title: 'New title', description: 'd', metadata: { k: 'v' } });
    const version = await h.call('GET', `/api/drops/${drop.slug}/v/3`, { token: alice });
    expect(version.json).toEqual({
      slug: drop.slug,
      version: 3,
      size_bytes: Buffer.byteLength(page('three')),
      context: 'because',
      created_at: expect.any(Number),
      is_latest: true,
      files: [],
      total_bytes: Buffer.byteLength(page('three')),
    });
  });

  it('leaves metadata untouched when omitted and clears it with {}', async () => {
    const drop = await create({ metadata: { a: '1' } });
    const kept = await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page() } });
    expect(kept.json.metadata).toEqual({ a: '1' });
    const cleared = await h.call('PUT', `/api/drops/${drop.slug}`, {
      token: alice,
      body: { html: page(), metadata: {} },
    });
    expect(cleared.json.metadata).toEqual({});
  });

  it('never reuses a version number after versions are deleted', async () => {
    const drop = await create();
    await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page() } });
    await h.call('DELETE', `/api/drops/${drop.slug}/v/2`, { token: alice });
    const next = await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page() } });
    expect(next.json.latest_version).toBe(3);
  });
});

describe('PATCH /api/drops/<slug>', () => {
  it('changes details without creating a version', async () => {
    const drop = await create({ metadata: { a: '1', b: '2' } });
    const reply = await h.call('PATCH', `/api/drops/${drop.slug}`, {
      token: alice,
      body: { title: 'Renamed', metadata: { c: '3' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ title: 'Renamed', latest_version: 1, metadata: { c: '3' }, description: '' });
    const cleared = await h.call('PATCH', `/api/drops/${drop.slug}`, { token: alice, body: { description: 'x' } });
    expect(cleared.json).toMatchObject({ description: 'x', metadata: { c: '3' }, title: 'Renamed' });
  });

  it('refuses html with 400 metadata_only_on_patch and changes nothing', async () => {
    const drop = await create();
    const reply = await h.call('PATCH', `/api/drops/${drop.slug}`, {
      token: alice,
      body: { html: page(), title: 'x' },
    });
    expect(reply.status).toBe(400);
    expect(reply.json.error.code).toBe('metadata_only_on_patch');
    const after = await h.call('GET', `/api/drops/${drop.slug}`, { token: alice });
    expect(after.json).toEqual(drop);
  });
});

describe('versions', () => {
  it('lists versions newest first as a bare array with is_latest and has_context', async () => {
    const drop = await create({ context: 'why' });
    await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page('2') } });
    const reply = await h.call('GET', `/api/drops/${drop.slug}/versions`, { token: alice });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual([
      {
        version: 2,
        size_bytes: Buffer.byteLength(page('2')),
        has_context: false,
        created_at: expect.any(Number),
        is_latest: true,
        files: [],
        total_bytes: Buffer.byteLength(page('2')),
      },
      {
        version: 1,
        size_bytes: Buffer.byteLength(page()),
        has_context: true,
        created_at: expect.any(Number),
        is_latest: false,
        files: [],
        total_bytes: Buffer.byteLength(page()),
      },
    ]);
  });

  it('gets a version with context null when absent', async () => {
    const drop = await create();
    const reply = await h.call('GET', `/api/drops/${drop.slug}/v/1`, { token: alice });
    expect(reply.json.context).toBeNull();
  });

  it('deleting the newest version makes the highest remaining one the latest', async () => {
    const drop = await create();
    await h.call('PUT', `/api/drops/${drop.slug}`, { token: alice, body: { html: page('2') } });
    const reply = await h.call('DELETE', `/api/drops/${drop.slug}/v/2`, { token: alice });
    expect(reply.status).toBe(200);
    expect(reply.json.latest_version).toBe(1);
    expect((await h.call('GET', `/api/drops/${drop.slug}/v/2`, { token: alice })).json.error.code).toBe(
      'version_not_found',
    );
  });

  it('refuses to delete the only version with 409 last_version_cannot_be_deleted', async () => {
    const drop = await create();
    const reply = await h.call('DELETE', `/api/drops/${drop.slug}/v/1`, { token: alice });
    expect(reply.status).toBe(409);
    expect(reply.json.error.code).toBe('last_version_cannot_be_deleted');
  });

  it('answers 404 version_not_found for an unknown version', async () => {
    const drop = await create();
    for (const method of ['GET', 'DELETE']) {
      const reply = await h.call(method, `/api/drops/${drop.slug}/v/9`, { token: alice });
      expect(reply.status).toBe(404);
      expect(reply.json.error.code).toBe('version_not_found');
    }
  });
});

describe('passcode', () => {
  it('sets, changes and removes the passcode; locked follows; updated_at moves', async () => {
    const drop = await create();
    const set = await h.call('POST', `/api/drops/${drop.slug}/passcode`, { token: alice, body: { passcode: 'abcd' } });
    expect(set.status).toBe(200);
    expect(set.json.locked).toBe(true);
    expect(set.json.updated_at).toBeGreaterThanOrEqual(drop.updated_at);
    const removed = await h.call('POST', `/api/drops/${drop.slug}/passcode`, { token: alice, body: { passcode: '' } });
    expect(removed.json.locked).toBe(false);
  });

  it('stores only a scrypt hash', async () => {
    const drop = await create({ passcode: 'plaintext-secret' });
    const stored = (await h.store.findPasscode(drop.slug))?.hash;
    expect(stored).toMatch(/^scrypt\$/);
    expect(stored).not.toContain('plaintext-secret');
  });
});

describe('DELETE /api/drops/<slug>', () => {
  it('answers 204 with no body, then 404 everywhere under the slug', async () => {
    const drop = await create();
    const reply = await h.call('DELETE', `/api/drops/${drop.slug}`, { token: alice });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    for (const url of [`/api/drops/${drop.slug}`, `/api/drops/${drop.slug}/versions`, `/api/drops/${drop.slug}/v/1`]) {
      const gone = await h.call('GET', url, { token: alice });
      expect(gone.status).toBe(404);
      expect(gone.json.error.code).toBe('not_found');
    }
  });
});

describe('GET /api/drops', () => {
  it("paginates, sorts and filters by metadata with AND, only over the caller's drops", async () => {
    const bob = await h.token('bob-list');
    await create({ title: 'other', metadata: { team: 'x' } }, await h.token('carol-list'));
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await create({ title: `d${i}`, metadata: { team: 'x', n: String(i % 2) } }, bob));
    }
    const all = await h.call('GET', '/api/drops?pageSize=2&page=2&sortOrder=asc', { token: bob });
    expect(all.status).toBe(200);
    expect(all.json.pagination).toEqual({
      page: 2,
      page_size: 2,
      total_items: 5,
      total_pages: 3,
      sort_by: 'created_at',
      sort_order: 'asc',
    });
    expect(all.json.data).toHaveLength(2);
    const filtered = await h.call('GET', '/api/drops?metadata.team=x&metadata.n=1', { token: bob });
    expect(filtered.json.data.map((d: { title: string }) => d.title).sort()).toEqual(['d1', 'd3']);
    expect(filtered.json.pagination.total_items).toBe(2);
    const none = await h.call('GET', '/api/drops?metadata.team=y', { token: bob });
    expect(none.json).toMatchObject({ data: [], pagination: { total_items: 0, total_pages: 0 } });
    const beyond = await h.call('GET', '/api/drops?page=99', { token: bob });
    expect(beyond.json.data).toEqual([]);
  });

  it('defaults to page 1, pageSize 50, created_at desc', async () => {
    const reply = await h.call('GET', '/api/drops', { token: alice });
    expect(reply.json.pagination).toMatchObject({ page: 1, page_size: 50, sort_by: 'created_at', sort_order: 'desc' });
    const created = reply.json.data.map((d: { created_at: number }) => d.created_at);
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it('sorts by updated_at', async () => {
    const token = await h.token('dave-sort');
    const first = await create({ title: 'first' }, token);
    await create({ title: 'second' }, token);
    await new Promise((r) => setTimeout(r, 5));
    await h.call('PATCH', `/api/drops/${first.slug}`, { token, body: { title: 'first, touched' } });
    const reply = await h.call('GET', '/api/drops?sortBy=updated_at', { token });
    expect(reply.json.data[0].slug).toBe(first.slug);
  });
});

describe('legacy /api/prototypes', () => {
  it('creates with password, lists as a bare array, updates without html, deletes with 200', async () => {
    const token = await h.token('legacy');
    const created = await h.call('POST', '/api/prototypes', {
      token,
      body: { title: 'Proto', html: page(), password: 'hunter22' },
    });
    expect(created.status).toBe(201);
    expect(created.json.locked).toBe(true);
    const slug = created.json.slug;
    const list = await h.call('GET', '/api/prototypes', { token });
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json.map((d: { slug: string }) => d.slug)).toEqual([slug]);
    const renamed = await h.call('PUT', `/api/prototypes/${slug}`, { token, body: { title: 'Renamed' } });
    expect(renamed.json).toMatchObject({ title: 'Renamed', latest_version: 1 });
    const bumped = await h.call('PUT', `/api/prototypes/${slug}`, { token, body: { html: page('2') } });
    expect(bumped.json.latest_version).toBe(2);
    const unlocked = await h.call('POST', `/api/prototypes/${slug}/password`, { token, body: { password: '' } });
    expect(unlocked.json.locked).toBe(false);
    const got = await h.call('GET', `/api/prototypes/${slug}`, { token });
    expect(got.status).toBe(200);
    const deleted = await h.call('DELETE', `/api/prototypes/${slug}`, { token });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ deleted: true, slug });
  });

  it('answers errors in the canonical nested shape', async () => {
    const token = await h.token('legacy');
    const reply = await h.call('POST', '/api/prototypes', { token, body: { html: page() } });
    expect(reply.status).toBe(400);
    expect(reply.json.error.code).toBe('title_required');
    const short = await h.call('POST', '/api/prototypes', {
      token,
      body: { title: 't', html: page(), password: 'abc' },
    });
    expect(short.json.error.code).toBe('passcode_too_short');
  });
});

describe('/api/me and /api/tokens', () => {
  it('describes the caller, its drop count and the token used', async () => {
    const token = await h.token('erin', 'laptop');
    await create({}, token);
    const me = await h.call('GET', '/api/me', { token });
    expect(me.status).toBe(200);
    expect(me.json).toEqual({
      user_id: expect.stringMatching(/^u_[0-9A-Za-z]{16}$/),
      login: 'erin',
      provider: 'local',
      created_at: expect.any(Number),
      drop_count: 1,
      token: {
        id: expect.stringMatching(/^[0-9a-f]{12}$/),
        label: 'laptop',
        created_at: expect.any(Number),
        last_used_at: expect.any(Number),
        // An operator (or device-flow) token: no OAuth client, never expires.
        expires_at: null,
        oauth_client: null,
        renewable_until: null,
      },
    });
  });

  it('lists active tokens with current, and revokes one with 204', async () => {
    const first = await h.token('frank', 'one');
    const second = await h.token('frank', 'two');
    const list = await h.call('GET', '/api/tokens', { token: first });
    expect(list.json).toHaveLength(2);
    const current = list.json.find((t: { current: boolean }) => t.current);
    const other = list.json.find((t: { current: boolean }) => !t.current);
    expect(current.label).toBe('one');
    const revoked = await h.call('DELETE', `/api/tokens/${other.id}`, { token: first });
    expect(revoked.status).toBe(204);
    expect((await h.call('GET', '/api/me', { token: second })).json.error.code).toBe('invalid_token');
    expect((await h.call('GET', '/api/tokens', { token: first })).json).toHaveLength(1);
  });

  it("DELETE /api/tokens of a bad id is 400 invalid_arg; of another account's token 404 not_found", async () => {
    const mine = await h.token('gina');
    const theirs = await h.token('hank');
    const bad = await h.call('DELETE', '/api/tokens/XYZ', { token: mine });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_arg');
    const theirId = (await h.call('GET', '/api/me', { token: theirs })).json.token.id;
    const foreign = await h.call('DELETE', `/api/tokens/${theirId}`, { token: mine });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('not_found');
    expect((await h.call('GET', '/api/me', { token: theirs })).status).toBe(200);
  });

  it('keeps last_used_at without a write per request and flushes it', async () => {
    const token = await h.token('ivy');
    await h.call('GET', '/api/me', { token });
    await h.services.tokenUses.flush();
    const tokens = await h.store.listActiveTokens((await h.call('GET', '/api/me', { token })).json.user_id);
    expect(tokens[0]?.lastUsedAt).toEqual(expect.any(Number));
  });
});
