/**
 * Comments over the API (docs/api.md, "Comments"): the owner comments, lists after a time, waits for a new comment,
 * resolves by id or by `resolves` on PUT, deletes; the drop's `comments` setting on every Drop; the shapes, limits
 * and refusals. Viewer comments and the waits across instances are in their own suites.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let ann: string;
let slug: string;

beforeEach(async () => {
  h = await createHarness();
  ann = await h.token('ann');
  const created = await h.call('POST', '/api/drops', { token: ann, body: { title: 'Report', html: page('one') } });
  slug = created.json.slug;
});
afterEach(async () => {
  await h.close();
});

const comment = (body: unknown, token = ann, on = slug) => h.call('POST', `/api/drops/${on}/comments`, { token, body });

describe('the comments setting', () => {
  it('is signed_in by default, returned on every Drop, and set by POST and PATCH', async () => {
    expect((await h.call('GET', `/api/drops/${slug}`, { token: ann })).json.comments).toBe('signed_in');
    const open = await h.call('POST', '/api/drops', {
      token: ann,
      body: { title: 'Open', html: page('x'), comments: 'open' },
    });
    expect(open.json.comments).toBe('open');
    const off = await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'off' } });
    expect(off.json.comments).toBe('off');
    const list = await h.call('GET', '/api/drops', { token: ann });
    expect(list.json.data.map((d: { comments: string }) => d.comments).sort()).toEqual(['off', 'open']);
    const bad = await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'everyone' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_arg');
  });
});

describe('the owner comments', () => {
  it('answers 201 with the Comment shape, on the latest version unless one is given', async () => {
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page('two') } });
    const made = await comment({ body: '  Check the totals  ', quote: 'Revenue up 12%' });
    expect(made.status).toBe(201);
    expect(made.json).toEqual({
      id: expect.stringMatching(/^c_[0-9A-Za-z]{16}$/),
      version: 2,
      body: 'Check the totals',
      quote: 'Revenue up 12%',
      author: { name: 'ann', kind: 'owner' },
      created_at: expect.any(Number),
      resolved_at: null,
      resolved_in_version: null,
    });
    expect((await comment({ body: 'on one', version: 1 })).json.version).toBe(1);
    expect((await comment({ body: 'nowhere', version: 9 })).json.error.code).toBe('version_not_found');
  });

  it('refuses bad bodies, other accounts and missing, malformed or revoked tokens', async () => {
    expect((await comment({ body: '   ' })).json.error).toMatchObject({
      code: 'invalid_arg',
      details: { field: 'body' },
    });
    expect((await comment({ body: 'x'.repeat(4001) })).status).toBe(400);
    expect((await comment({ body: 'é'.repeat(4000) })).status).toBe(201);
    expect((await comment({ body: 'q', quote: 'x'.repeat(1001) })).json.error.details.field).toBe('quote');
    expect((await comment({ body: 5 })).status).toBe(400);
    const bob = await h.token('bob');
    expect((await comment({ body: 'hi' }, bob)).status).toBe(403);
    expect((await h.call('GET', `/api/drops/${slug}/comments`, { token: bob })).status).toBe(403);
    expect((await comment({ body: 'hi' }, 'hd_nope')).status).toBe(401);
    expect((await h.call('POST', `/api/drops/${slug}/comments`, { body: { body: 'hi' } })).status).toBe(401);
    expect((await comment({ body: 'hi' }, ann, 'nosuchdrop')).status).toBe(404);
    const id = (await h.call('GET', '/api/tokens', { token: bob })).json[0].id;
    await h.call('DELETE', `/api/tokens/${id}`, { token: bob });
    expect((await h.call('GET', '/api/comments', { token: bob })).status).toBe(401);
  });
});

describe('listing and waiting', () => {
  it('lists after `since`, oldest first, with strictly increasing times; across drops with the slug', async () => {
    const first = (await comment({ body: 'a' })).json;
    const second = (await comment({ body: 'b' })).json;
    expect(second.created_at).toBeGreaterThan(first.created_at);
    const all = await h.call('GET', `/api/drops/${slug}/comments`, { token: ann });
    expect(all.json.data.map((c: { body: string }) => c.body)).toEqual(['a', 'b']);
    const after = await h.call('GET', `/api/drops/${slug}/comments?since=${first.created_at}`, { token: ann });
    expect(after.json.data.map((c: { body: string }) => c.body)).toEqual(['b']);
    const other = await h.call('POST', '/api/drops', { token: ann, body: { title: 'Other', html: page('o') } });
    await comment({ body: 'c' }, ann, other.json.slug);
    const everywhere = await h.call('GET', `/api/comments?since=${second.created_at}`, { token: ann });
    expect(everywhere.json.data).toEqual([expect.objectContaining({ slug: other.json.slug, body: 'c' })]);
    expect((await h.call('GET', '/api/comments?wait=61', { token: ann })).status).toBe(400);
    expect((await h.call('GET', '/api/comments?since=-1', { token: ann })).status).toBe(400);
  });

  it('holds a waiting request until a comment arrives, and answers within a second of it', async () => {
    const since = Date.now();
    const started = Date.now();
    const waiting = h.call('GET', `/api/drops/${slug}/comments?since=${since}&wait=20`, { token: ann });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const made = Date.now();
    await comment({ body: 'now' });
    const answer = await waiting;
    expect(answer.json.data.map((c: { body: string }) => c.body)).toEqual(['now']);
    expect(Date.now() - made).toBeLessThan(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('a reader following `since` with `wait` sees each comment once while 4 writers comment on 4 drops of one owner', async () => {
    const busy = await createHarness({ limits: { maxWritesPerMinute: 100_000, maxWritesPerDay: 100_000 } });
    try {
      const owner = await busy.token('ann');
      const slugs: string[] = [];
      for (let d = 0; d < 4; d++) {
        const made = await busy.call('POST', '/api/drops', { token: owner, body: { title: `d${d}`, html: page('x') } });
        slugs.push(made.json.slug);
      }
      const perWriter = 30;
      let writing = true;
      const writers = Promise.all(
        slugs.map(async (on, w) => {
          for (let i = 0; i < perWriter; i++) {
            const url = `/api/drops/${on}/comments`;
            const made = await busy.call('POST', url, { token: owner, body: { body: `w${w} n${i}` } });
            expect(made.status).toBe(201);
          }
        }),
      ).finally(() => {
        writing = false;
      });
      // As docs/api.md teaches: since = the last comment's created_at, wait when nothing is new.
      const seen: Array<{ id: string; created_at: number }> = [];
      let since = 0;
      for (;;) {
        const wasWriting = writing;
        const answer = await busy.call('GET', `/api/comments?since=${since}&wait=${wasWriting ? 5 : 0}`, {
          token: owner,
        });
        const data: Array<{ id: string; created_at: number }> = answer.json.data;
        seen.push(...data);
        if (data.length > 0) since = data[data.length - 1]?.created_at ?? since;
        else if (!wasWriting) break;
      }
      await writers;
      const stored = (await busy.call('GET', '/api/comments?since=0', { token: owner })).json.data;
      expect(stored).toHaveLength(4 * perWriter);
      expect(seen.map((c) => c.id).sort()).toEqual(stored.map((c: { id: string }) => c.id).sort());
      expect(new Set(stored.map((c: { created_at: number }) => c.created_at)).size).toBe(4 * perWriter);
    } finally {
      await busy.close();
    }
  });

  it('answers an empty list when the wait ends with nothing new', async () => {
    const started = Date.now();
    const answer = await h.call('GET', `/api/comments?since=${Date.now()}&wait=1`, { token: ann });
    expect(answer.json).toEqual({ data: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('resolving and deleting', () => {
  it('resolves by id in the latest version, and by `resolves` on PUT in the new version', async () => {
    const one = (await comment({ body: 'fix the chart' })).json;
    const two = (await comment({ body: 'typo' })).json;
    const resolved = await h.call('POST', `/api/drops/${slug}/comments/${one.id}/resolve`, { token: ann });
    expect(resolved.json).toMatchObject({ id: one.id, resolved_in_version: 1, resolved_at: expect.any(Number) });
    const bad = await h.call('PUT', `/api/drops/${slug}`, {
      token: ann,
      body: { html: page('v2'), resolves: [two.id, 'c_unknown'] },
    });
    expect(bad.json.error).toMatchObject({ code: 'invalid_arg', details: { field: 'resolves' } });
    expect((await h.call('GET', `/api/drops/${slug}`, { token: ann })).json.latest_version).toBe(1);
    const put = await h.call('PUT', `/api/drops/${slug}`, {
      token: ann,
      body: { html: page('v2'), resolves: [two.id] },
    });
    expect(put.json.latest_version).toBe(2);
    const list = await h.call('GET', `/api/drops/${slug}/comments`, { token: ann });
    expect(list.json.data.find((c: { id: string }) => c.id === two.id).resolved_in_version).toBe(2);
    expect(list.json.data.find((c: { id: string }) => c.id === one.id).resolved_in_version).toBe(1);
    expect((await h.call('POST', `/api/drops/${slug}/comments/c_nope/resolve`, { token: ann })).status).toBe(404);
  });

  it('deletes a comment; deleting the version or the drop deletes its comments', async () => {
    const one = (await comment({ body: 'one' })).json;
    expect((await h.call('DELETE', `/api/drops/${slug}/comments/${one.id}`, { token: ann })).status).toBe(204);
    expect((await h.call('DELETE', `/api/drops/${slug}/comments/${one.id}`, { token: ann })).status).toBe(404);
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page('v2') } });
    await comment({ body: 'on v1', version: 1 });
    await comment({ body: 'on v2', version: 2 });
    await h.call('DELETE', `/api/drops/${slug}/v/1`, { token: ann });
    const left = await h.call('GET', `/api/drops/${slug}/comments`, { token: ann });
    expect(left.json.data.map((c: { body: string }) => c.body)).toEqual(['on v2']);
    await h.call('DELETE', `/api/drops/${slug}`, { token: ann });
    expect((await h.call('GET', '/api/comments', { token: ann })).json.data).toEqual([]);
  });
});

describe('comments from the viewer page', () => {
  const post = (on: string, fields: Record<string, string>, site = 'same-origin') =>
    h.app.inject({
      method: 'POST',
      url: `/p/${on}/comments`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': site },
      payload: new URLSearchParams(fields).toString(),
    });

  it('follow the setting: guests on open drops (10 per 10 minutes per address), not on signed_in or off', async () => {
    await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'open' } });
    for (let i = 0; i < 10; i++) {
      const ok = await post(slug, { name: 'Gil', body: `note ${i}` });
      expect(ok.statusCode).toBe(303);
      expect(ok.headers.location).toBe(`/p/${slug}#comments`);
    }
    const limited = await post(slug, { name: 'Gil', body: 'one more' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(slug, { name: '', body: 'x' })).statusCode).toBe(400);
    const list = await h.call('GET', `/api/drops/${slug}/comments`, { token: ann });
    expect(list.json.data).toHaveLength(10);
    expect(list.json.data[0].author).toEqual({ name: 'Gil', kind: 'guest' });

    await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'signed_in' } });
    expect((await post(slug, { name: 'Gil', body: 'x' })).statusCode).toBe(401);
    await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'off' } });
    const off = await post(slug, { name: 'Gil', body: 'x' });
    expect(off.statusCode).toBe(403);
    expect(off.body).toContain('Comments are off for this drop.');
  });

  it('refuses posts from other sites and from sandboxed documents before anything else', async () => {
    await h.call('PATCH', `/api/drops/${slug}`, { token: ann, body: { comments: 'open' } });
    for (const site of ['cross-site', 'same-site']) {
      expect((await post(slug, { name: 'Evil', body: 'x' }, site)).statusCode).toBe(403);
    }
    expect((await post('nosuchdrop', { name: 'Gil', body: 'x' })).statusCode).toBe(404);
    expect((await post(slug, { name: 'Gil', body: '   ' })).statusCode).toBe(400);
    expect((await h.call('GET', `/api/drops/${slug}/comments`, { token: ann })).json.data).toEqual([]);
  });

  it('keep to the per-drop cap, atomically', async () => {
    const comment = (i: number) => ({
      id: `c_cap${i}`,
      slug,
      version: undefined,
      body: `n${i}`,
      quote: null,
      authorName: 'g',
      authorKind: 'guest' as const,
      authorAccountId: null,
      now: Date.now(),
    });
    const results = await Promise.all([0, 1, 2, 3, 4].map((i) => h.store.addComment(comment(i), 3)));
    expect(results.filter((r) => r === 'comment_limit')).toHaveLength(2);
  });
});
