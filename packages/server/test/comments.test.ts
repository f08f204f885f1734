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

/** Signs `login` into the console through the local provider, as a browser does; the viewer form then uses it. */
async function consoleSession(on: Harness, login: string): Promise<{ cookie: string; csrf: string }> {
  const start = await on.app.inject({ method: 'GET', url: '/console/login?next=/console' });
  const signin = String([start.headers['set-cookie'] ?? []].flat()[0] ?? '').split(';')[0] ?? '';
  const state = new URL(String(start.headers.location), 'http://drops.test').searchParams.get('state') ?? '';
  const done = await on.app.inject({
    method: 'POST',
    url: '/verify/callback',
    headers: { cookie: signin, origin: 'http://drops.test', 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ state, username: login }).toString(),
  });
  const set = [done.headers['set-cookie'] ?? []].flat().find((c) => String(c).startsWith('hd_web=')) ?? '';
  const cookie = String(set).split(';')[0] ?? '';
  const list = await on.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(list.body)?.[1] ?? '' };
}

/** A post of the viewer's comment form: a guest's, or with a console session. */
const viewerPost = (on: Harness, slug: string, fields: Record<string, string>, cookie?: string) =>
  on.app.inject({
    method: 'POST',
    url: `/p/${slug}/comments`,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
      ...(cookie === undefined ? {} : { cookie }),
    },
    payload: new URLSearchParams(fields).toString(),
  });

describe('a comment flood', () => {
  it('fills the cap for others only: the owner still comments, by API and in the viewer', async () => {
    const small = await createHarness({ limits: { maxCommentsPerDrop: 3 } });
    try {
      const owner = await small.token('ann');
      const made = await small.call('POST', '/api/drops', {
        token: owner,
        body: { title: 'Open', html: page('x'), comments: 'open' },
      });
      const on = made.json.slug;
      for (const name of ['Gil', 'Hal', 'Ivy']) {
        expect((await viewerPost(small, on, { name, body: `from ${name}` })).statusCode).toBe(303);
      }
      const full = await viewerPost(small, on, { name: 'Jo', body: 'one too many' });
      expect(full.statusCode).toBe(409);
      expect(full.body).toContain('maximum number of comments');
      const byApi = await small.call('POST', `/api/drops/${on}/comments`, { token: owner, body: { body: 'Mine' } });
      expect(byApi.status).toBe(201);
      const session = await consoleSession(small, 'ann');
      const inViewer = await viewerPost(small, on, { body: 'Mine too', csrf: session.csrf }, session.cookie);
      expect(inViewer.statusCode).toBe(303);
      // The owner's comments do not use up the cap: still full for others, and nothing more from them.
      const member = await consoleSession(small, 'bea');
      const refused = await viewerPost(small, on, { body: 'Me?', csrf: member.csrf }, member.cookie);
      expect(refused.statusCode).toBe(409);
      const all = (await small.call('GET', `/api/drops/${on}/comments`, { token: owner })).json.data;
      expect(all.map((c: { author: { kind: string } }) => c.author.kind)).toEqual([
        'guest',
        'guest',
        'guest',
        'owner',
        'owner',
      ]);
    } finally {
      await small.close();
    }
  });

  it('the viewer shows the newest 50 comments of the version and pages to older ones: its size stays bounded', async () => {
    const body = (i: number) => `${String(i).padStart(4, '0')} ${'x'.repeat(3990)}`;
    const count = 120;
    for (let i = 0; i < count; i++) {
      const added = await h.store.addComment(
        {
          id: `c_flood${String(i).padStart(11, '0')}`,
          slug,
          version: undefined,
          body: body(i),
          quote: null,
          authorName: `guest ${i}`,
          authorKind: 'guest',
          authorAccountId: null,
          now: 1_800_000_000_000,
        },
        1000,
      );
      expect(typeof added).not.toBe('string');
    }
    const seen: string[] = [];
    let url = `/p/${slug}`;
    const sizes: number[] = [];
    for (let pages = 0; pages < 5; pages++) {
      const viewer = await h.app.inject({ method: 'GET', url });
      expect(viewer.statusCode).toBe(200);
      sizes.push(viewer.body.length);
      const ids = [...viewer.body.matchAll(/data-comment="([^"]+)"/g)].map((m) => m[1] ?? '');
      seen.push(...ids);
      if (pages === 0) {
        expect(ids).toHaveLength(50);
        expect(viewer.body).toContain(`aria-label="${count} comments">${count}</span>`);
        expect(viewer.body).toContain(`Showing the newest 50 of ${count}`);
        // Oldest first on the page: the newest comment is the last one, right above the form.
        expect(ids[49]).toBe(`c_flood${String(count - 1).padStart(11, '0')}`);
      }
      const older = /id="older-comments" href="([^"]+)"/.exec(viewer.body)?.[1];
      if (older === undefined) break;
      url = older.replaceAll('&amp;', '&').replace(/#.*$/, '');
      expect(viewer.body).toContain('id="older-comments"');
    }
    expect(seen.sort()).toEqual(Array.from({ length: count }, (_, i) => `c_flood${String(i).padStart(11, '0')}`));
    // 50 comments of 4,000 characters: about 200 KB, whatever the drop's count (it was 4 MB at 1,000).
    for (const size of sizes) expect(size).toBeLessThan(260_000);
    // A time that is not one shows the newest page.
    const odd = await h.app.inject({ method: 'GET', url: `/p/${slug}?comments_before=soon` });
    expect(odd.body).toContain('Showing the newest 50');
  });
});

describe('what a version resolved', () => {
  it('the viewer of version n lists the comments resolved in n, made on earlier versions, apart from its own', async () => {
    const early = (await comment({ body: 'The chart is missing October' })).json;
    const other = (await comment({ body: 'Typo in the title' })).json;
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page('two'), resolves: [early.id] } });
    await comment({ body: 'Better now' });
    const v2 = (await h.app.inject({ method: 'GET', url: `/p/${slug}` })).body;
    const box = /<section class="resolved-here".*?<\/section>/s.exec(v2)?.[0] ?? '';
    expect(box).toContain('Resolved in this version');
    expect(box).toContain(`data-comment="${early.id}"`);
    expect(box).toContain('The chart is missing October');
    expect(box).toContain('on v1');
    expect(box).not.toContain(other.id);
    // The count says what the panel holds: one comment on v2, one resolved in it.
    expect(v2).toContain('aria-label="1 comments, and 1 resolved in this version">2</span>');
    expect(v2).toContain('Comments on this version');
    expect(v2.replace(box, '')).toContain('Better now');
    expect(v2.replace(box, '')).not.toContain(early.id);
    // On v1, the comment is where it was made, marked with the version that resolved it.
    const v1 = (await h.app.inject({ method: 'GET', url: `/p/${slug}?v=1` })).body;
    expect(v1).toContain('Resolved in v2');
    expect(v1).not.toContain('id="resolved-here"');
    // Resolving by id marks it in the latest version, and shows there too.
    await h.call('POST', `/api/drops/${slug}/comments/${other.id}/resolve`, { token: ann });
    const after = (await h.app.inject({ method: 'GET', url: `/p/${slug}?v=2` })).body;
    expect(/<section class="resolved-here".*?<\/section>/s.exec(after)?.[0]).toContain(other.id);
  });
});
