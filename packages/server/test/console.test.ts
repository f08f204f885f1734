/**
 * The owner console over HTTP (docs/console.md): sessions (missing, malformed, expired, signed out), the CSRF token
 * and Origin check on every POST, another account's drop as a 404, the write limits shared with the API, refusals
 * as readable pages with the catalogue's status, and each action as the API then reports it. The browser side
 * (sign-in through the providers, the pages themselves, accessibility) is console.browser.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newContentLabel } from '../src/domain/content-origin.js';
import { exchangeCode, issueCode, registerClient } from '../src/domain/oauth.js';
import { createHarness, createTestClock, type Harness, page, type TestClock } from './helpers.js';

const ORIGIN = 'http://drops.test';

let h: Harness;
let clock: TestClock;

beforeEach(async () => {
  clock = createTestClock();
  newMinuteEachPost = true;
  h = await createHarness({ clock, limits: { maxWritesPerMinute: 6, commentsPerPage: 5 } });
});
afterEach(async () => {
  await h.close();
});

interface Session {
  readonly cookie: string;
  /** The CSRF token of the session's forms, read from a console page as a browser would. */
  readonly csrf: string;
}

const cookiesOf = (setCookie: string | string[] | undefined) => [setCookie ?? []].flat();
const pair = (header: string) => header.split(';')[0] ?? '';

/** Signs `login` in through the local provider, as the browser does: /console/login, the form, the callback. */
async function signIn(login: string): Promise<Session> {
  const start = await h.app.inject({ method: 'GET', url: '/console/login?next=/console' });
  expect(start.statusCode).toBe(303);
  const signin = pair(cookiesOf(start.headers['set-cookie'])[0] ?? '');
  const state = new URL(String(start.headers.location), ORIGIN).searchParams.get('state') ?? '';
  const done = await h.app.inject({
    method: 'POST',
    url: '/verify/callback',
    headers: { cookie: signin, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ state, username: login }).toString(),
  });
  expect(done.statusCode).toBe(303);
  expect(done.headers.location).toBe('/console');
  const set = cookiesOf(done.headers['set-cookie']).find((c) => c.startsWith('hd_web=')) ?? '';
  expect(set).toMatch(/; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/);
  const cookie = pair(set);
  const list = await get('/console', cookie);
  const csrf = /name="csrf" value="([^"]+)"/.exec(list.text)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return { cookie, csrf };
}

const get = async (url: string, cookie?: string) => {
  const response = await h.app.inject({ method: 'GET', url, headers: cookie === undefined ? {} : { cookie } });
  return { status: response.statusCode, text: response.body, headers: response.headers };
};

/** A console form post; `fields` already include `csrf` unless a test leaves it out on purpose. */
async function post(url: string, fields: Record<string, string>, headers: Record<string, string>) {
  const response = await h.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
  return { status: response.statusCode, text: response.body, headers: response.headers };
}
/** Whether each console POST moves the clock to a new minute (so only the write-limit test meets the limit). */
let newMinuteEachPost = true;
const as = (s: Session, url: string, fields: Record<string, string> = {}) => {
  if (newMinuteEachPost) clock.advance(60_000);
  return post(url, { csrf: s.csrf, ...fields }, { cookie: s.cookie, origin: ORIGIN });
};

async function publish(token: string, title = 'Q3 report', metadata: Record<string, string> = {}) {
  const created = await h.call('POST', '/api/drops', { token, body: { title, html: page(title), metadata } });
  expect(created.status).toBe(201);
  return created.json.slug as string;
}

describe('sessions', () => {
  it('without a session, every page is the sign-in page and every POST is refused with nothing changed', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    for (const url of [
      '/console',
      '/console/tokens',
      ...['', '/delete', '/diff'].map((p) => `/console/drops/${slug}${p}`),
    ]) {
      const answer = await get(url);
      expect(answer.status, url).toBe(200);
      expect(answer.text).toContain('id="console-sign-in"');
      expect(answer.text).not.toContain('Q3 report');
    }
    for (const cookie of [undefined, 'hd_web=garbage', 'hd_web=e30.AAAA']) {
      const headers = { origin: ORIGIN, ...(cookie === undefined ? {} : { cookie }) };
      const refused = await post(`/console/drops/${slug}/delete`, { csrf: 'x' }, headers);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('id="console-error"');
    }
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).status).toBe(200);
  });

  it('a session lasts 7 days; signing out clears the cookie', async () => {
    const s = await signIn('ann');
    clock.advance(7 * 24 * 3600_000 - 60_000);
    expect((await get('/console', s.cookie)).text).toContain('Signed in as <strong>ann</strong>');
    clock.advance(120_000);
    expect((await get('/console', s.cookie)).text).toContain('id="console-sign-in"');
    const fresh = await signIn('ann');
    const out = await as(fresh, '/console/logout');
    expect(out.status).toBe(303);
    expect(cookiesOf(out.headers['set-cookie'])[0]).toMatch(/^hd_web=; Path=\/; Max-Age=0/);
  });

  it('one account per identity: the console and the API see the same account', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    expect((await get('/console', s.cookie)).text).toContain(`data-slug="${slug}"`);
  });
});

describe('every POST needs our Origin and the session CSRF token', () => {
  it('refuses a missing or wrong token, a token of another session, and a missing, foreign or null Origin', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const other = await signIn('bob');
    const attempts: Array<[Record<string, string>, Record<string, string>]> = [
      [{}, { cookie: s.cookie, origin: ORIGIN }],
      [{ csrf: 'AAAA' }, { cookie: s.cookie, origin: ORIGIN }],
      [{ csrf: other.csrf }, { cookie: s.cookie, origin: ORIGIN }],
      [{ csrf: s.csrf }, { cookie: s.cookie }],
      [{ csrf: s.csrf }, { cookie: s.cookie, origin: 'http://evil.test' }],
      [{ csrf: s.csrf }, { cookie: s.cookie, origin: 'null' }],
    ];
    const urls = [
      [`/console/drops/${slug}/details`, { title: 'Hacked', description: '', tags: '' }],
      [`/console/drops/${slug}/passcode`, { passcode: 'hacked1' }],
      [`/console/drops/${slug}/expiry`, { expires: '1h' }],
      [`/console/drops/${slug}/versions/1/delete`, {}],
      [`/console/drops/${slug}/versions/1/restore`, {}],
      [`/console/drops/${slug}/delete`, {}],
      ['/console/logout', {}],
    ] as const;
    for (const [url, fields] of urls) {
      for (const [extra, headers] of attempts) {
        const refused = await post(url, { ...fields, ...extra }, headers);
        expect(refused.status, `${url} ${JSON.stringify(extra)} ${JSON.stringify(headers)}`).toBe(403);
      }
    }
    const drop = await h.call('GET', `/api/drops/${slug}`, { token });
    expect(drop.json).toMatchObject({ title: 'Q3 report', locked: false, latest_version: 1, expires_at: null });
  });

  it('a GET never changes anything', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const confirm = await get(`/console/drops/${slug}/delete`, s.cookie);
    expect(confirm.text).toContain('Delete “Q3 report”?');
    for (const url of [
      `/console/drops/${slug}/delete`,
      `/console/drops/${slug}/versions/1/delete`,
      '/console/logout',
    ]) {
      await get(url, s.cookie);
    }
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).status).toBe(200);
    expect((await get('/console', s.cookie)).text).toContain('Signed in as');
  });
});

describe("another account's drop", () => {
  it('is a 404 page on every page and action, the same as a missing drop, and nothing changes', async () => {
    const bob = await h.token('bob');
    const slug = await publish(bob, "Bob's secret plan");
    const ann = await signIn('ann');
    for (const url of [
      `/console/drops/${slug}`,
      `/console/drops/${slug}/delete`,
      `/console/drops/${slug}/diff?from=1&to=1`,
      '/console/drops/nope',
      '/console/drops/a%20b',
    ]) {
      const answer = await get(url, ann.cookie);
      expect(answer.status, url).toBe(404);
      expect(answer.text).not.toContain('secret plan');
    }
    const actions = ['details', 'passcode', 'expiry', 'versions/1/restore', 'versions/1/delete', 'delete'];
    for (const action of [...actions, 'comments/delete', 'comments/delete-guests', 'comments/setting']) {
      const answer = await as(ann, `/console/drops/${slug}/${action}`, {
        title: 'x',
        passcode: 'abcdef',
        expires: '1h',
        comments: 'off',
        'pick:c_x': '1',
      });
      expect(answer.status, action).toBe(404);
    }
    expect((await get('/console', ann.cookie)).text).not.toContain(slug);
    const drop = await h.call('GET', `/api/drops/${slug}`, { token: bob });
    expect(drop.json).toMatchObject({
      title: "Bob's secret plan",
      locked: false,
      latest_version: 1,
      expires_at: null,
      comments: 'signed_in',
    });
  });
});

describe('actions, as the API then reports them', () => {
  it('edits details, locks and unlocks, restores and deletes versions, deletes the drop, revokes a token', async () => {
    const token = await h.token('ann');
    const spare = await h.token('ann', 'spare');
    const slug = await publish(token, 'Draft', { project: 'acme' });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('second') } });
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;

    const saved = await as(s, `${base}/details`, {
      title: 'Final',
      description: 'For the board',
      tags: 'project=acme\nteam = data',
    });
    expect(saved).toMatchObject({ status: 303, headers: { location: `${base}?done=saved` } });
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      title: 'Final',
      description: 'For the board',
      metadata: { project: 'acme', team: 'data' },
    });
    expect((await get(`${base}?done=saved`, s.cookie)).text).toContain('Details saved.');

    const expiring = await as(s, `${base}/expiry`, { expires: '7d' });
    expect(expiring).toMatchObject({ status: 303, headers: { location: `${base}?done=expiry-set` } });
    const expiresAt = (await h.call('GET', `/api/drops/${slug}`, { token })).json.expires_at;
    expect(expiresAt).toBe(clock.now() + 7 * 24 * 3_600_000);
    const shown = (await get(`${base}?done=expiry-set`, s.cookie)).text;
    expect(shown).toContain('Expiry set');
    expect(shown).toContain(`Expires <time datetime="${new Date(expiresAt).toISOString()}"`);
    const badChoice = await as(s, `${base}/expiry`, { expires: '2y' });
    expect(badChoice.status).toBe(400);
    expect(badChoice.text).toContain('Choose when the drop expires');
    expect((await as(s, `${base}/expiry`, { expires: 'never' })).headers.location).toBe(`${base}?done=expiry-cleared`);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.expires_at).toBeNull();

    expect((await as(s, `${base}/passcode`, { passcode: 'open sesame' })).status).toBe(303);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.locked).toBe(true);
    expect((await as(s, `${base}/passcode`, { passcode: '' })).status).toBe(303);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.locked).toBe(false);

    expect((await as(s, `${base}/versions/1/restore`)).status).toBe(303);
    const v3 = await h.call('GET', `/api/drops/${slug}/v/3`, { token });
    expect(v3.status).toBe(200);
    expect((await h.call('GET', `/p/${slug}/raw?v=3`)).text).toContain('<p>Draft</p>');

    expect((await as(s, `${base}/versions/2/delete`)).status).toBe(303);
    const versions = await h.call('GET', `/api/drops/${slug}/versions`, { token });
    expect(versions.json.map((v: { version: number }) => v.version).sort()).toEqual([1, 3]);

    const spareId = (await h.call('GET', '/api/tokens', { token: spare })).json.find(
      (t: { current: boolean }) => t.current,
    ).id;
    expect((await as(s, `/console/tokens/${spareId}/revoke`)).status).toBe(303);
    expect((await h.call('GET', '/api/me', { token: spare })).status).toBe(401);

    expect((await as(s, `${base}/delete`)).headers.location).toBe('/console?done=deleted');
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).status).toBe(404);
  });

  it('refuses as the API does, on the page, with the status from the catalogue and the typed values kept', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    const short = await as(s, `${base}/passcode`, { passcode: 'abc' });
    expect(short.status).toBe(400);
    expect(short.text).toMatch(/id="console-error"[^>]*>passcode must be at least 4 characters/);
    const badTags = await as(s, `${base}/details`, { title: 'Kept', description: '', tags: 'no equals sign' });
    expect(badTags.status).toBe(400);
    expect(badTags.text).toContain('Tag line 1 is not key=value.');
    expect(badTags.text).toContain('value="Kept"');
    const longTitle = await as(s, `${base}/details`, { title: 'x'.repeat(201), description: '', tags: '' });
    expect(longTitle.status).toBe(400);
    const badKey = await as(s, `${base}/details`, { title: 'T', description: '', tags: '-bad=1' });
    expect(badKey.status).toBe(400);
    const only = await as(s, `${base}/versions/1/delete`);
    expect(only.status).toBe(409);
    expect(only.text).toContain('The only remaining version cannot be deleted');
    expect((await as(s, `${base}/versions/abc/restore`)).status).toBe(404);
    expect((await as(s, `${base}/versions/9/restore`)).status).toBe(404);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      title: 'Q3 report',
      locked: false,
    });
  });

  it('counts toward the same write limits as the API: a 429 page says when to retry', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    newMinuteEachPost = false;
    for (let i = 0; i < 3; i++) {
      expect(
        (await as(s, `/console/drops/${slug}/details`, { title: `T${i}`, description: '', tags: '' })).status,
      ).toBe(303);
    }
    await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'api' } });
    await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'api' } });
    const limited = await as(s, `/console/drops/${slug}/details`, { title: 'late', description: '', tags: '' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toMatch(/Try again in \d+ s\./);
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'api' } })).status).toBe(429);
    // A token revocation is not a drop write (as on the API), so it is not limited.
    const spare = await h.token('ann', 'spare');
    const id = (await h.call('GET', '/api/tokens', { token: spare })).json.find(
      (t: { current: boolean }) => t.current,
    ).id;
    expect((await as(s, `/console/tokens/${id}/revoke`)).status).toBe(303);
  });
});

describe('the tokens page', () => {
  it("names an OAuth token's client, says when each token expires and until when its client renews it", async () => {
    const s = await signIn('tina');
    await h.token('tina', 'laptop');
    const redirectUri = 'http://127.0.0.1:9/cb';
    const client = await registerClient(h.services.oauth, {
      redirectUris: [redirectUri],
      clientName: 'Claude Desktop',
    });
    const [account] = await h.store.findAccountsByLogin('tina');
    const approval = {
      clientId: client.id,
      accountId: account?.id ?? '',
      codeChallenge: 'x',
      redirectUri,
      resource: null,
    };
    const code = await issueCode(h.services.oauth, approval);
    await exchangeCode(h.services.oauth, client, code, { redirectUri: undefined, resource: undefined });

    const rows = (html: string) => html.split('<tr data-token=').slice(1);
    const listed = rows((await get('/console/tokens', s.cookie)).text);
    const oauth = listed.find((row) => row.includes(client.id)) ?? '';
    const laptop = listed.find((row) => row.includes('laptop')) ?? '';
    expect(oauth).toContain('<strong>Claude Desktop</strong>');
    expect(oauth).toContain(`MCP client (OAuth): <span class="mono">${client.id}</span>`);
    expect(oauth).toContain(`datetime="${new Date(clock.now() + 3_600_000).toISOString()}"`);
    expect(oauth).toContain(
      `its client renews it until <time datetime="${new Date(clock.now() + 30 * 86_400_000).toISOString()}"`,
    );
    expect(laptop).toMatch(/data-label="Expires"><span class="muted">never<\/span><\/td>/);
    expect(laptop).not.toContain('MCP client');

    clock.advance(2 * 3_600_000);
    const later = rows((await get('/console/tokens', s.cookie)).text).find((row) => row.includes(client.id)) ?? '';
    expect(later).toContain('<span class="muted">expired</span>');
  });
});

describe('comments and read receipts on the drop page', () => {
  it('shows comments and views, resolves and deletes comments, and sets who may comment', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    const first = await h.call('POST', `/api/drops/${slug}/comments`, {
      token,
      body: { body: 'Fix the <b>chart</b>' },
    });
    const second = await h.call('POST', `/api/drops/${slug}/comments`, { token, body: { body: 'Typo', quote: 'teh' } });
    await h.app.inject({ method: 'GET', url: `/p/${slug}`, headers: { 'user-agent': 'reader-1' } });
    await h.services.flushCounters();
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    const shown = await get(base, s.cookie);
    expect(shown.text).toContain('Fix the &lt;b&gt;chart&lt;/b&gt;');
    expect(shown.text).toContain('(2 open of 2)');
    expect(shown.text).toMatch(/1 view by 1 viewer/);
    expect((await as(s, `${base}/comments/${first.json.id}/resolve`)).status).toBe(303);
    const resolved = await h.call('GET', `/api/drops/${slug}/comments`, { token });
    expect(resolved.json.data[0]).toMatchObject({ id: first.json.id, resolved_in_version: 1 });
    expect((await as(s, `${base}/comments/${second.json.id}/delete`)).status).toBe(303);
    expect((await h.call('GET', `/api/drops/${slug}/comments`, { token })).json.data).toHaveLength(1);
    expect((await as(s, `${base}/comments/c_nope/delete`)).status).toBe(404);
    const saved = await as(s, `${base}/details`, { title: 'Q3 report', description: '', tags: '', comments: 'open' });
    expect(saved.status).toBe(303);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.comments).toBe('open');
    const bad = await as(s, `${base}/details`, { title: 'Q3 report', description: '', tags: '', comments: 'all' });
    expect(bad.status).toBe(400);
  });
});

describe('a flood of guest comments', () => {
  /** A guest's comment from the drop's page (same origin, no session). */
  const guest = async (slug: string, name: string) => {
    const made = await h.app.inject({
      method: 'POST',
      url: `/p/${slug}/comments`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams({ name, body: `spam from ${name}` }).toString(),
    });
    expect(made.statusCode).toBe(303);
  };
  const kinds = async (token: string, slug: string) =>
    ((await h.call('GET', `/api/drops/${slug}/comments`, { token })).json.data as Array<{ author: { kind: string } }>)
      .map((c) => c.author.kind)
      .sort();

  it('pages the list, deletes the ticked or every guest comment, and lets only signed-in people comment, each one write', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    await h.call('PATCH', `/api/drops/${slug}`, { token, body: { comments: 'open' } });
    for (const name of ['Gil', 'Hal', 'Ivy', 'Jo', 'Kim', 'Lu', 'Mo']) await guest(slug, name);
    await h.call('POST', `/api/drops/${slug}/comments`, { token, body: { body: 'Mine' } });
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;

    // Five per page here (commentsPerPage), newest first, and the way to the older ones.
    const first = await get(base, s.cookie);
    expect(first.text).toContain('(8 open of 8)');
    expect([...first.text.matchAll(/class="comment" data-comment=/g)]).toHaveLength(5);
    expect(first.text).toContain('Showing the newest 5 of 8');
    expect(first.text).toContain('Delete all 7 guest comments');
    expect(first.text).toContain('id="comments-signed-in"');
    const older = /id="older-comments" href="([^"]+)"/.exec(first.text)?.[1] ?? '';
    const second = await get(older.replace(/#.*$/, ''), s.cookie);
    expect([...second.text.matchAll(/class="comment" data-comment=/g)]).toHaveLength(3);
    expect(second.text).toContain('id="newest-comments"');
    expect(second.text).not.toContain('id="older-comments"');

    // Two guests' comments (the newest is the owner's). Without the CSRF token, or from another site: refused, and
    // nothing deleted or changed.
    const ids = [...first.text.matchAll(/name="pick:([^"]+)"/g)].map((m) => m[1] ?? '');
    const picks = Object.fromEntries(ids.slice(1, 3).map((id) => [`pick:${id}`, '1']));
    for (const url of [`${base}/comments/delete`, `${base}/comments/delete-guests`, `${base}/comments/setting`]) {
      const fields = { ...picks, comments: 'signed_in' };
      expect((await post(url, fields, { cookie: s.cookie, origin: ORIGIN })).status, url).toBe(403);
      const foreign = await post(url, { ...fields, csrf: s.csrf }, { cookie: s.cookie, origin: 'http://evil.test' });
      expect(foreign.status, url).toBe(403);
    }
    expect(await kinds(token, slug)).toHaveLength(8);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.comments).toBe('open');

    // Each action is one write, however many comments it removes: three actions, then three API writes, fill 6.
    clock.advance(60_000);
    newMinuteEachPost = false;
    expect((await as(s, `${base}/comments/delete`, {})).status).toBe(400);
    clock.advance(60_000);
    const ticked = await as(s, `${base}/comments/delete`, picks);
    expect(ticked.status).toBe(303);
    expect(ticked.headers.location).toBe(`${base}?done=comments-deleted#comments`);
    expect(await kinds(token, slug)).toHaveLength(6);
    const switched = await as(s, `${base}/comments/setting`, { comments: 'signed_in' });
    expect(switched.headers.location).toBe(`${base}?done=comments-signed_in#comments`);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.comments).toBe('signed_in');
    const guestNow = await h.app.inject({
      method: 'POST',
      url: `/p/${slug}/comments`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: 'name=Nu&body=more',
    });
    expect(guestNow.statusCode).toBe(401);
    expect((await as(s, `${base}/comments/delete-guests`)).status).toBe(303);
    expect(await kinds(token, slug)).toEqual(['owner']);
    for (let i = 0; i < 3; i++) {
      expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: `T${i}` } })).status).toBe(200);
    }
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'late' } })).status).toBe(429);

    const after = await get(`${base}?done=guest-comments-deleted`, s.cookie);
    expect(after.text).toContain('Every guest comment of this drop was deleted.');
    expect(after.text).not.toContain('id="delete-guest-comments"');
    expect(after.text).not.toContain('id="comments-signed-in"');
    expect(after.text).toContain('Who may comment: people signed in');
    clock.advance(60_000);
    expect((await as(s, `${base}/comments/setting`, { comments: 'everyone' })).status).toBe(400);
  });
});

describe('comparing versions', () => {
  it('offers previous and latest on the drop page; the diff page shows the lines, or refuses with the status', async () => {
    const token = await h.token('ann');
    const slug = await publish(token);
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('Q3 <final>') } });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('Q3 <final>') } });
    const s = await signIn('ann');
    const drop = (await get(`/console/drops/${slug}`, s.cookie)).text;
    expect(drop).toContain(`<form method="get" action="/console/drops/${slug}/diff"`);
    expect(drop).toMatch(/id="compare-from" name="from">.*<option value="2" selected>Version 2</);
    expect(drop).toMatch(/id="compare-to" name="to"><option value="3" selected>Version 3 \(latest\)</);
    const shown = await get(`/console/drops/${slug}/diff?from=1&to=3`, s.cookie);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(
      '<span class="count-add">+1</span> line added, <span class="count-del">−1</span> removed',
    );
    expect(shown.text).toContain(
      '<td class="ln"></td><td class="ln">1</td><td class="code"><ins><span class="sign">+</span>',
    );
    expect(shown.text).toContain('&lt;p&gt;Q3 &lt;final&gt;&lt;/p&gt;');
    expect(shown.text).toContain(`href="/p/${slug}?v=1" id="open-from"`);
    expect((await get(`/console/drops/${slug}/diff`, s.cookie)).text).toContain('The two versions have the same HTML.');
    for (const [query, status, message] of [
      ['?from=x&to=3', 400, 'from must be a version number'],
      ['?from=1&to=9', 404, `has no version 9`],
    ] as const) {
      const refused = await get(`/console/drops/${slug}/diff${query}`, s.cookie);
      expect([refused.status, refused.text.includes(message)], query).toEqual([status, true]);
      expect(refused.text).toContain('id="console-error"');
    }
  });
});

describe('a version’s files (docs/api.md, "Many files in one drop")', () => {
  it('lists each version’s files with sizes and links; the diff page names the files added, removed and changed', async () => {
    const token = await h.token('ann');
    const png = { content: Buffer.alloc(2048, 7).toString('base64'), encoding: 'base64' };
    const created = await h.call('POST', '/api/drops', {
      token,
      body: {
        title: 'Folder',
        html: page('Folder'),
        files: { 'img/chart.png': png, 'style.css': { content: 'p{}' }, 'gone.js': { content: '1' } },
      },
    });
    const { slug, content_url: contentUrl } = created.json;
    await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: {
        html: page('Folder'),
        files: { 'img/chart.png': png, 'style.css': { content: 'p{x:1}' }, 'new.json': { content: '[]' } },
      },
    });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('Folder') } });
    const s = await signIn('ann');
    const drop = (await get(`/console/drops/${slug}`, s.cookie)).text;
    const total = Buffer.byteLength(page('Folder')) + 2048 + 3 + 1;
    expect(drop).toContain(`<summary>3 files · ${(total / 1024).toFixed(1)} KB in all</summary>`);
    expect(drop).toContain(
      `<li><a class="mono" href="${contentUrl ?? `/p/${slug}/raw/`}v/1/img/chart.png">img/chart.png</a> <span class="muted">2.0 KB · image/png</span></li>`,
    );
    expect(drop).toMatch(/id="files-v2"[\s\S]*new\.json/);
    expect(drop).not.toContain('id="files-v3"');
    const shown = (await get(`/console/drops/${slug}/diff?from=1&to=2`, s.cookie)).text;
    expect(shown).toContain('<p id="files-counts">1 file added, 1 removed, 1 changed.</p>');
    expect(shown).toMatch(/id="files-added"[\s\S]*new\.json/);
    expect(shown).toMatch(/id="files-removed"[\s\S]*gone\.js/);
    expect(shown).toMatch(
      /id="files-changed"[\s\S]*style\.css[\s\S]*>v1<span class="sr-only"> of style\.css<\/span><\/a> → <a[^>]*>v2</,
    );
    expect((await get(`/console/drops/${slug}/diff?from=2&to=2`, s.cookie)).text).toContain(
      '<p id="files-same">The two versions have the same files.</p>',
    );
    const bare = await publish(token, 'No files');
    expect((await get(`/console/drops/${bare}`, s.cookie)).text).toContain(
      '<td data-label="Files"><span class="muted">None</span>',
    );
  });
});

describe('the list', () => {
  it('searches, filters by tags, sorts and paginates; bad filters are a readable 400', async () => {
    const token = await h.token('ann');
    for (let i = 0; i < 30; i++) {
      const title = i % 3 === 0 ? `Revenue ${i}` : `Churn ${i}`;
      await h.store.createDrop(
        {
          slug: `drop${String(i).padStart(2, '0')}`,
          accountId: (await h.call('GET', '/api/me', { token })).json.user_id,
          contentLabel: newContentLabel(),
          title,
          description: null,
          html: page(title),
          sizeBytes: 10,
          context: null,
          metadata: { project: i % 2 === 0 ? 'acme' : 'globex' },
          passcodeHash: null,
          now: clock.now() + i,
        },
        1000,
      );
    }
    const s = await signIn('ann');
    const count = (html: string) => (html.match(/<tr data-slug=/g) ?? []).length;
    const first = await get('/console', s.cookie);
    expect(count(first.text)).toBe(25);
    expect(first.text).toContain('Page 1 of 2');
    expect(count((await get('/console?page=2', s.cookie)).text)).toBe(5);
    const revenue = await get('/console?q=REVENUE', s.cookie);
    expect(count(revenue.text)).toBe(10);
    const both = await get('/console?q=revenue&tags=project%3Dacme', s.cookie);
    expect(count(both.text)).toBe(5);
    const oldest = await get('/console?sort=oldest', s.cookie);
    expect(oldest.text.indexOf('data-slug="drop00"')).toBeGreaterThan(0);
    const bad = await get('/console?tags=nokey', s.cookie);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('is not a tag filter');
    expect(count((await get('/console?q=%25', s.cookie)).text)).toBe(0);
  });

  it('searches content, not only titles, best match first, and shows the snippet with the words marked', async () => {
    const token = await h.token('seeker');
    const make = async (body: Record<string, unknown>) =>
      (await h.call('POST', '/api/drops', { token, body: { html: page('x'), ...body } })).json.slug as string;
    const inText = await make({
      title: 'Weekly',
      html: page('The <b>hippo</b> & crocodile count went up <script>nope()</script>'),
    });
    clock.advance(1000); // created a second apart: "oldest first" has one answer
    const inTitle = await make({ title: 'Hippo census' });
    await make({ title: 'Other', metadata: { project: 'zoo' } });
    const s = await signIn('seeker');
    const found = await get('/console?q=HIPPO', s.cookie);
    expect(found.status).toBe(200);
    const order = [...found.text.matchAll(/<tr data-slug="(\w+)"/g)].map((m) => m[1]);
    expect(order).toEqual([inTitle, inText]);
    expect(found.text).toContain('<p class="snippet">The <mark>hippo</mark> &amp; crocodile count went up</p>');
    expect(found.text).toContain('Found in text');
    expect(found.text).toContain('<option value="" selected>Best match</option>');
    const byDate = await get('/console?q=hippo&sort=oldest', s.cookie);
    expect([...byDate.text.matchAll(/<tr data-slug="(\w+)"/g)].map((m) => m[1])).toEqual([inText, inTitle]);
    expect((await get('/console?q=crocodile&tags=project%3Dzoo', s.cookie)).text).toContain('No drop matches');
    expect((await get('/console?q=nope', s.cookie)).text).toContain('No drop matches');
    const plain = await get('/console', s.cookie);
    expect(plain.text).toContain('<option value="" selected>Recently updated</option>');
    expect(plain.text).not.toContain('class="snippet"');
  });

  it('teaches the first publish when the account has no drop', async () => {
    const s = await signIn('newcomer');
    const empty = await get('/console', s.cookie);
    expect(empty.text).toContain('id="empty-console"');
    expect(empty.text).toContain('/cli/htmldrop.tgz');
  });
});
