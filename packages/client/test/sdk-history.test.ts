/**
 * The SDK's history and safe writes against the real service: ETag and ifMatch, restore, diff, expires_at,
 * idempotent creates, and upsertDrop when another writer gets in between its lookup and its write (simulated by a
 * fetch that lets a second client publish just before the upsert's PUT or POST leaves).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, type HtmlDropClient, type ResponseInfo } from '../src/client.js';
import type { Drop } from '../src/types.js';
import { type UpsertConflict, upsertCreateKey, upsertDrop } from '../src/upsert.js';
import { failure } from './failure.js';
import { PAGE, tempDir } from './run.js';
import { useService } from './service.js';

const service = useService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });
let token: string;
let client: HtmlDropClient;
beforeAll(async () => {
  token = await service.mintToken('history-user');
  client = createClient({ server: service.baseUrl, token });
});

/** A client whose requests matching `when` first run `before` (another writer's move), at most `times` times. */
function interrupted(when: (method: string, url: URL) => boolean, before: () => Promise<void>, times = 1) {
  let left = times;
  const fetchWith: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (left > 0 && when(init?.method ?? 'GET', url)) {
      left--;
      await before();
    }
    return fetch(input, init);
  };
  return createClient({ server: service.baseUrl, token, fetch: fetchWith });
}

const lockDir = () => tempDir('htmldrop-locks-');
const html = async (drop: Drop, version: number) => (await fetch(`${drop.raw_url}?v=${version}`)).text();

describe('conditional writes, restore, diff, expiry', () => {
  it('reports the ETag, refuses a stale ifMatch with the latest version, restores and diffs', async () => {
    const answers: ResponseInfo[] = [];
    const onResponse = (info: ResponseInfo) => answers.push(info);
    const drop = await client.createDrop({ title: 'H', html: PAGE('one') }, { onResponse });
    await client.getDrop(drop.slug, { onResponse });
    expect(answers.map((a) => [a.status, a.etagVersion, a.replayed])).toEqual([
      [201, 1, false],
      [200, 1, false],
    ]);
    expect((await client.updateDrop(drop.slug, { html: PAGE('two') }, { ifMatch: 1 })).latest_version).toBe(2);
    const stale = await failure(client.updateDrop(drop.slug, { html: PAGE('three') }, { ifMatch: 1 }));
    expect(stale).toMatchObject({ code: 'version_conflict', status: 412, latestVersion: 2 });
    expect((await failure(client.patchDrop(drop.slug, { title: 'x' }, { ifMatch: 1 }))).code).toBe('version_conflict');
    expect((await failure(client.deleteDrop(drop.slug, { ifMatch: 1 }))).code).toBe('version_conflict');
    expect((await failure(client.restore(drop.slug, 1, { ifMatch: 1 }))).code).toBe('version_conflict');

    const restored = await client.restore(drop.slug, 1, { ifMatch: 2 });
    expect(restored.latest_version).toBe(3);
    expect(await html(restored, 3)).toContain('<p>one</p>');
    expect((await failure(client.restore(drop.slug, 9))).code).toBe('version_not_found');

    const diff = await client.diff(drop.slug, { from: 2 });
    expect(diff).toMatchObject({ from: 2, to: 3, added: 1, removed: 1 });
    expect(diff.unified).toMatch(/^-.*<p>two<\/p>/m);
    expect(diff.unified).toMatch(/^\+.*<p>one<\/p>/m);
    expect(await client.diff(drop.slug)).toMatchObject({ from: 2, to: 3 });
    expect((await failure(client.diff(drop.slug, { to: 8 }))).code).toBe('version_not_found');
  });

  it('sets, changes and clears expires_at; refuses one outside the range (invalid_arg)', async () => {
    const at = Date.now() + 3_600_000;
    const drop = await client.createDrop({ title: 'E', html: PAGE('e'), expires_at: at });
    expect(drop.expires_at).toBe(at);
    expect((await client.getDrop(drop.slug)).expires_at).toBe(at);
    expect((await client.patchDrop(drop.slug, { expires_at: at + 60_000 })).expires_at).toBe(at + 60_000);
    expect((await client.patchDrop(drop.slug, { expires_at: null })).expires_at).toBeNull();
    const early = await failure(client.patchDrop(drop.slug, { expires_at: Date.now() + 1000 }));
    expect(early).toMatchObject({ code: 'invalid_arg', status: 400 });
    expect((await failure(client.createDrop({ title: 'E', html: 'x', expires_at: 1 }))).code).toBe('invalid_arg');
  });

  it('a repeated create with the same key and body is replayed (no second drop); another body is 422', async () => {
    const answers: ResponseInfo[] = [];
    const key = `sdk-test-${Date.now()}`;
    const input = { title: 'Once', html: PAGE('once'), metadata: { once: key } };
    const first = await client.createDrop(input, { idempotencyKey: key, onResponse: (i) => answers.push(i) });
    const again = await client.createDrop(input, { idempotencyKey: key, onResponse: (i) => answers.push(i) });
    expect(again).toEqual(first);
    expect(answers.map((a) => a.replayed)).toEqual([false, true]);
    expect((await client.listDrops({ metadata: { once: key } })).data).toHaveLength(1);
    const other = await failure(client.createDrop({ ...input, title: 'Twice' }, { idempotencyKey: key }));
    expect(other).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
  });
});

describe('upsertDrop against another writer', () => {
  it('another version published between lookup and PUT: 412, looks again, publishes on top, says so', async () => {
    const match = { conflict: 'once' };
    const first = await upsertDrop(client, { match, title: 'C', html: PAGE('mine 1') }, { lockDir: lockDir() });
    const slug = first.drop.slug;
    const told: UpsertConflict[] = [];
    const racing = interrupted(
      (method, url) => method === 'PUT' && url.pathname.endsWith(`/api/drops/${slug}`),
      async () => {
        await client.updateDrop(slug, { html: PAGE('theirs') });
      },
    );
    const result = await upsertDrop(
      racing,
      { match, title: 'C', html: PAGE('mine 2'), metadata: { extra: 'x' } },
      { lockDir: lockDir(), onConflict: (c) => told.push(c) },
    );
    expect(result.action).toBe('updated');
    expect(result.drop).toMatchObject({ slug, latest_version: 3, metadata: { conflict: 'once', extra: 'x' } });
    expect(result.conflicts).toEqual([
      {
        kind: 'version',
        slug,
        version: 2,
        message: `another writer published version 2 of ${slug} meanwhile; publishing this document on top of it.`,
      },
    ]);
    expect(told).toEqual(result.conflicts);
    expect(await html(result.drop, 2)).toContain('theirs');
    expect(await html(result.drop, 3)).toContain('mine 2');
  });

  it('gives up with version_conflict after 3 retries when other writers keep getting in first; writes nothing', async () => {
    const match = { conflict: 'always' };
    const { drop } = await upsertDrop(client, { match, title: 'A', html: PAGE('v1') }, { lockDir: lockDir() });
    const racing = interrupted(
      (method) => method === 'PUT',
      async () => {
        await client.updateDrop(drop.slug, { html: PAGE('theirs') });
      },
      99,
    );
    const told: UpsertConflict[] = [];
    const error = await failure(
      upsertDrop(
        racing,
        { match, title: 'A', html: PAGE('mine') },
        { lockDir: lockDir(), onConflict: (c) => told.push(c) },
      ),
    );
    expect(error).toMatchObject({ code: 'version_conflict', details: { slug: drop.slug, latest_version: 5 } });
    expect(told.map((c) => c.version)).toEqual([2, 3, 4]);
    const versions = await client.listVersions(drop.slug);
    expect(versions.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    for (const v of [2, 3, 4, 5]) expect(await html(drop, v)).toContain('theirs');
  });

  it('another machine creates between lookup and POST: the key refuses the second create, which updates instead', async () => {
    const match = { created: 'elsewhere' };
    const other = createClient({ server: service.baseUrl, token });
    const racing = interrupted(
      (method, url) => method === 'POST' && url.pathname.endsWith('/api/drops'),
      async () => {
        await upsertDrop(other, { match, title: 'Other', html: PAGE('other machine') }, { lockDir: lockDir() });
      },
    );
    const result = await upsertDrop(
      racing,
      { match, title: 'Mine', html: PAGE('this machine') },
      { lockDir: lockDir() },
    );
    expect(result.action).toBe('updated');
    expect(result.conflicts).toEqual([
      expect.objectContaining({ kind: 'created', slug: result.drop.slug, version: 1 }),
    ]);
    expect(result.drop.latest_version).toBe(2);
    const listed = await client.listDrops({ metadata: match });
    expect(listed.data.map((d) => d.slug)).toEqual([result.drop.slug]);
    expect(await html(result.drop, 1)).toContain('other machine');
    expect(await html(result.drop, 2)).toContain('this machine');
  });

  it('a key whose drop was deleted since: a replayed create is checked and a refused one looked up; both create anew', async () => {
    const match = { stale: `key-${Date.now()}` };
    const input = { match, title: 'S', html: PAGE('same') };
    const first = await upsertDrop(client, input, { lockDir: lockDir() });
    expect(first.action).toBe('created');
    await client.deleteDrop(first.drop.slug);
    // Same body again within 24 h: the service replays the deleted drop; the upsert notices and creates a new one.
    const second = await upsertDrop(client, input, { lockDir: lockDir() });
    expect(second).toMatchObject({ action: 'created', conflicts: [] });
    expect(second.drop.slug).not.toBe(first.drop.slug);
    expect((await client.getDrop(second.drop.slug)).latest_version).toBe(1);
    await client.deleteDrop(second.drop.slug);
    // Another body: the service refuses the key (422); the lookup finds nothing; a fresh key creates.
    const third = await upsertDrop(client, { ...input, html: PAGE('changed') }, { lockDir: lockDir() });
    expect(third).toMatchObject({ action: 'created', conflicts: [] });
    expect((await client.listDrops({ metadata: match })).data.map((d) => d.slug)).toEqual([third.drop.slug]);
    expect(upsertCreateKey(client.server, match)).toMatch(/^upsert-[0-9a-f]{64}$/);
  });
});

describe('each drop on its own origin, with a network policy', () => {
  it('create and PATCH round-trip network; every drop names its content_url; PUT keeps the policy', async () => {
    const cdns = ['https://cdn.jsdelivr.net', 'https://unpkg.com'];
    const drop = await client.createDrop({ title: 'N', html: PAGE('n'), network: cdns });
    expect(drop.network).toEqual(cdns);
    // On loopback the service's content origin is {label}.localhost on its own port (docs/api.md).
    const port = new URL(service.baseUrl).port;
    expect(drop.content_url).toMatch(new RegExp(`^http://[a-z0-9]+\\.localhost:${port}/$`));
    expect(await client.getDrop(drop.slug)).toMatchObject({ network: cdns, content_url: drop.content_url });
    expect((await client.updateDrop(drop.slug, { html: PAGE('n2') })).network).toEqual(cdns);
    expect((await client.patchDrop(drop.slug, { network: 'none' })).network).toBe('none');
    const reopened = await client.patchDrop(drop.slug, { network: 'open' });
    expect(reopened).toMatchObject({ network: 'open', content_url: drop.content_url, latest_version: 2 });

    const plain = await client.createDrop({ title: 'Plain', html: PAGE('p') });
    expect(plain.network).toBe('open');
    expect(plain.content_url).not.toBe(drop.content_url);
    const listed = await client.listDrops({ pageSize: 200 });
    expect(listed.data.every((d) => typeof d.content_url === 'string')).toBe(true);
  });

  it('refuses a malformed policy with 400 invalid_arg naming the field, and writes nothing', async () => {
    const drop = await client.createDrop({ title: 'Bad', html: PAGE('b'), network: 'none' });
    for (const network of [['https://unpkg.com/react'], ['https://unpkg.com/'], [], 'closed'] as const) {
      const refused = await failure(client.patchDrop(drop.slug, { network: network as readonly string[] }));
      expect(refused, JSON.stringify(network)).toMatchObject({
        code: 'invalid_arg',
        status: 400,
        details: { field: 'network' },
      });
    }
    const eleven = Array.from({ length: 11 }, (_, i) => `https://cdn${i}.example`);
    expect(await failure(client.createDrop({ title: 'Bad', html: PAGE('b'), network: eleven }))).toMatchObject({
      code: 'invalid_arg',
      details: { field: 'network' },
    });
    expect((await client.getDrop(drop.slug)).network).toBe('none');
  });

  it('upsertDrop creates with the policy, and on update PATCHes it only when it differs', async () => {
    const methods: string[] = [];
    const counting = createClient({
      server: service.baseUrl,
      token,
      fetch: (input, init) => {
        methods.push(init?.method ?? 'GET');
        return fetch(input, init);
      },
    });
    const match = { network: `upsert-${Date.now()}` };
    const input = { match, title: 'U', html: PAGE('u'), network: ['https://cdn.jsdelivr.net'] };
    const created = await upsertDrop(counting, input, { lockDir: lockDir() });
    expect(created.drop.network).toEqual(['https://cdn.jsdelivr.net']);
    methods.length = 0;
    const same = await upsertDrop(counting, input, { lockDir: lockDir() });
    expect(same.drop).toMatchObject({ latest_version: 2, network: ['https://cdn.jsdelivr.net'] });
    expect(methods).toEqual(['GET', 'PUT']);
    methods.length = 0;
    const sealed = await upsertDrop(counting, { ...input, network: 'none' }, { lockDir: lockDir() });
    expect(sealed.drop).toMatchObject({ latest_version: 3, network: 'none' });
    expect(methods).toEqual(['GET', 'PUT', 'PATCH']);
  });
});
