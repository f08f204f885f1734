/**
 * GET /api/drops/<slug>/diff (docs/api.md, "Version history: diff"): the defaults, explicit versions, equal
 * versions, bad and unknown versions, and the owner-only refusals, on a real app and database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.js';

let h: Harness;
let owner: string;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  owner = await h.token('owner');
});
afterAll(() => h.close());

const doc = (...rows: string[]) => `<!doctype html>\n<title>t</title>\n${rows.map((r) => `<p>${r}</p>\n`).join('')}`;

/** A drop whose versions have these documents. */
async function publish(...htmls: string[]): Promise<string> {
  const [first, ...rest] = htmls;
  const created = await h.call('POST', '/api/drops', { token: owner, body: { title: 't', html: first } });
  expect(created.status, created.text).toBe(201);
  const { slug } = created.json;
  for (const html of rest)
    expect((await h.call('PUT', `/api/drops/${slug}`, { token: owner, body: { html } })).status).toBe(200);
  return slug;
}

const diff = (slug: string, query = '', token: string = owner) =>
  h.call('GET', `/api/drops/${slug}/diff${query}`, { token });

describe('GET /api/drops/<slug>/diff', () => {
  let slug: string;
  beforeAll(async () => {
    slug = await publish(doc('a', 'b', 'c'), doc('a', 'B', 'c'), doc('a', 'B', 'c', 'd', 'e'));
  });

  it('compares the latest version with the one before it by default', async () => {
    const reply = await diff(slug);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.json).toEqual({
      from: 2,
      to: 3,
      unified: `--- ${slug} v2\n+++ ${slug} v3\n@@ -3,3 +3,5 @@\n <p>a</p>\n <p>B</p>\n <p>c</p>\n+<p>d</p>\n+<p>e</p>\n`,
      added: 2,
      removed: 0,
      exact: true,
      files: { added: [], removed: [], changed: [] },
    });
  });

  it('compares the versions named, in either direction; from alone compares with the latest', async () => {
    const forward = await diff(slug, '?from=1&to=2');
    expect(forward.json).toMatchObject({ from: 1, to: 2, added: 1, removed: 1, exact: true });
    expect(forward.json.unified).toContain('\n-<p>b</p>\n+<p>B</p>\n');
    const back = await diff(slug, '?from=3&to=1');
    expect(back.json).toMatchObject({ from: 3, to: 1, added: 1, removed: 3 });
    expect(back.json.unified.startsWith(`--- ${slug} v3\n+++ ${slug} v1\n`)).toBe(true);
    expect((await diff(slug, '?from=1')).json).toMatchObject({ from: 1, to: 3, added: 3, removed: 1 });
    expect((await diff(slug, '?to=2')).json).toMatchObject({ from: 1, to: 2, added: 1, removed: 1 });
  });

  it('answers an empty diff for a version compared with itself, or with an equal one', async () => {
    expect((await diff(slug, '?from=2&to=2')).json).toEqual({
      from: 2,
      to: 2,
      unified: '',
      added: 0,
      removed: 0,
      exact: true,
      files: { added: [], removed: [], changed: [] },
    });
    const same = await publish(doc('x'), doc('x'));
    expect((await diff(same)).json).toEqual({
      from: 1,
      to: 2,
      unified: '',
      added: 0,
      removed: 0,
      exact: true,
      files: { added: [], removed: [], changed: [] },
    });
  });

  it('skips deleted versions when choosing the default from', async () => {
    const gappy = await publish(doc('1'), doc('2'), doc('3'));
    expect((await h.call('DELETE', `/api/drops/${gappy}/v/2`, { token: owner })).status).toBe(200);
    expect((await diff(gappy)).json).toMatchObject({ from: 1, to: 3, added: 1, removed: 1 });
  });

  it('400 invalid_arg naming from or to when it is not a version number', async () => {
    for (const [query, field] of [
      ['?from=0', 'from'],
      ['?from=abc', 'from'],
      ['?from=01', 'from'],
      ['?from=1.5', 'from'],
      ['?from=', 'from'],
      ['?to=-1', 'to'],
      ['?to=2147483648', 'to'],
      ['?from=1&to=x', 'to'],
    ] as const) {
      const reply = await diff(slug, query);
      expect([reply.status, reply.json.error.code, reply.json.error.details?.field], query).toEqual([
        400,
        'invalid_arg',
        field,
      ]);
    }
  });

  it('404 version_not_found for an unknown version, and when there is no version before to', async () => {
    for (const [query, version] of [
      ['?from=9', 9],
      ['?to=9', 9],
      ['?from=1&to=2147483647', 2147483647],
    ] as const) {
      const reply = await diff(slug, query);
      expect([reply.status, reply.json.error.code, reply.json.error.details?.version], query).toEqual([
        404,
        'version_not_found',
        version,
      ]);
    }
    const single = await publish(doc('only'));
    for (const query of ['', '?to=1']) {
      const reply = await diff(single, query);
      expect([reply.status, reply.json.error.code, reply.json.error.details?.field]).toEqual([
        404,
        'version_not_found',
        'from',
      ]);
      expect(reply.json.error.message).toContain('no version before 1');
    }
  });

  it("404 not_found for an unknown drop, 403 forbidden for another account's, before the query is read", async () => {
    const unknown = await diff('NoSuchDrop', '?from=x');
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'not_found']);
    const foreign = await diff(slug, '?from=x', await h.token('stranger'));
    expect([foreign.status, foreign.json.error.code]).toEqual([403, 'forbidden']);
    const bad = await diff('a.b');
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
      const reply = await h.call('GET', `/api/drops/${slug}/diff`, { headers });
      expect([reply.status, reply.json.error.code]).toEqual([401, code]);
    }
  });

  it('is described in the OpenAPI document', async () => {
    const openapi = (await h.call('GET', '/openapi.json')).json;
    const operation = openapi.paths['/api/drops/{slug}/diff'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['from', 'slug', 'to']);
    const answer = operation.responses['200'].content['application/json'].schema;
    expect(Object.keys(answer.properties).sort()).toEqual([
      'added',
      'exact',
      'files',
      'from',
      'removed',
      'to',
      'unified',
    ]);
    expect(operation.security).toBeDefined();
  });
});
