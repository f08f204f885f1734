/**
 * The service's HTML forms refuse a bad post with a page, never a JSON error body (docs/api.md, "Forms"): a body
 * that is not UTF-8 (`%FF`), not a form (JSON, plain text), or over the form's cap, on the console, /verify, the
 * OAuth approval, the passcode gate and the viewer's comment form. Each answers its code's status (400, 415, 413)
 * with the page the person was on, values kept where the form could be read, and changes nothing. /api/ stays JSON.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

const ORIGIN = 'http://drops.test';
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const FORM = 'application/x-www-form-urlencoded';

let h: Harness;
let token: string;
let slug: string;

beforeEach(async () => {
  h = await createHarness();
  token = await h.token('ann');
  const created = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Q3 report', description: 'stored words', html: page('q3'), comments: 'open' },
  });
  slug = created.json.slug;
});
afterEach(async () => {
  await h.close();
});

/** What the account can see through the API: a refused form must leave it as it was. */
async function state() {
  const drop = await h.call('GET', `/api/drops/${slug}`, { token });
  const comments = await h.call('GET', `/api/drops/${slug}/comments`, { token });
  const tokens = await h.call('GET', '/api/tokens', { token });
  return { drop: drop.json, comments: comments.json, tokens: tokens.json.length };
}

interface Post {
  readonly url: string;
  readonly type?: string;
  readonly payload: string | Buffer;
  readonly headers?: Record<string, string>;
}

async function post({ url, type = FORM, payload, headers = {} }: Post) {
  const response = await h.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': type, accept: BROWSER, origin: ORIGIN, ...headers },
    payload,
  });
  return { status: response.statusCode, text: response.body, type: String(response.headers['content-type']) };
}

/** An HTML page (never the JSON error body) with the catalogue's status for the code. */
function expectPage(answer: { status: number; text: string; type: string }, status: number) {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status);
  expect(answer.type).toMatch(/^text\/html/);
  expect(answer.text).toMatch(/^<!doctype html>/);
  expect(answer.text).not.toContain('"error":{');
}

/** The body kinds every form refuses, with their statuses. */
const BAD_BODIES: ReadonlyArray<{ what: string; type: string; payload: string; status: number; says: RegExp }> = [
  { what: 'bad percent-encoding (%FF)', type: FORM, payload: 'csrf=x&title=%FF', status: 400, says: /UTF-8/ },
  { what: 'a JSON body', type: 'application/json', payload: '{"title":"x"}', status: 415, says: /web form|form sends/ },
  { what: 'plain text', type: 'text/plain', payload: 'title=x', status: 415, says: /form sends/ },
  { what: 'a multipart body', type: 'multipart/form-data; boundary=x', payload: '--x--', status: 415, says: /form/ },
];

/** Signs `login` in through the local provider as a browser does; the session cookie and its CSRF token. */
async function signIn(login: string): Promise<{ cookie: string; csrf: string }> {
  const start = await h.app.inject({ method: 'GET', url: '/console/login?next=/console' });
  const signin = String([start.headers['set-cookie']].flat()[0] ?? '').split(';')[0] ?? '';
  const state = new URL(String(start.headers.location), ORIGIN).searchParams.get('state') ?? '';
  const done = await h.app.inject({
    method: 'POST',
    url: '/verify/callback',
    headers: { cookie: signin, origin: ORIGIN, 'content-type': FORM },
    payload: new URLSearchParams({ state, username: login }).toString(),
  });
  const cookie = [done.headers['set-cookie'] ?? []]
    .flat()
    .map((line) => String(line).split(';')[0] ?? '')
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
  const list = await h.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(list.body)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return { cookie, csrf };
}

describe('the console', () => {
  it('a bad body on the details form: the drop page again with the message and the stored details', async () => {
    const s = await signIn('ann');
    const before = await state();
    for (const bad of BAD_BODIES) {
      const answer = await post({
        url: `/console/drops/${slug}/details`,
        type: bad.type,
        payload: bad.payload,
        headers: { cookie: s.cookie },
      });
      expectPage(answer, bad.status);
      expect(answer.text, bad.what).toMatch(bad.says);
      expect(answer.text).toContain('id="console-error"');
      expect(answer.text).toContain('stored words');
      expect(answer.text).toContain('Signed in as <strong>ann</strong>');
    }
    expect(await state()).toEqual(before);
  });

  it('a pasted 70 KB description: 400 with the limit named and the form shown as typed', async () => {
    const s = await signIn('ann');
    const before = await state();
    const typed = `Pasted from the report. ${'long text '.repeat(7_000)}`;
    const payload = new URLSearchParams({ csrf: s.csrf, title: 'New title', description: typed, tags: 'team=data' });
    const answer = await post({
      url: `/console/drops/${slug}/details`,
      payload: payload.toString(),
      headers: { cookie: s.cookie },
    });
    expect(Buffer.byteLength(payload.toString())).toBeGreaterThan(70_000);
    expectPage(answer, 400);
    expect(answer.text).toMatch(/description[^<]*500 characters/);
    expect(answer.text).toContain('value="New title"');
    expect(answer.text).toContain('Pasted from the report. long text long text');
    expect(answer.text).toContain('team=data');
    expect(await state()).toEqual(before);
  });

  it('a form over 1 MiB: 413 with the limit named, the stored details shown, nothing read or changed', async () => {
    const s = await signIn('ann');
    const before = await state();
    const answer = await post({
      url: `/console/drops/${slug}/details`,
      payload: `csrf=${s.csrf}&description=${'x'.repeat(1_048_577)}`,
      headers: { cookie: s.cookie },
    });
    expectPage(answer, 413);
    expect(answer.text).toContain('at most 1 MiB');
    expect(answer.text).toContain('stored words');
    expect(await state()).toEqual(before);
  });

  it('a stranger’s large post is refused (403) on its Origin and session before its body is read', async () => {
    const s = await signIn('ann');
    const response = await h.app.inject({
      method: 'POST',
      url: `/console/drops/${slug}/details`,
      headers: { 'content-type': FORM, origin: 'https://evil.example', cookie: s.cookie, 'content-length': '50000000' },
      payload: 'csrf=x',
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    const signedOut = await post({ url: `/console/drops/${slug}/details`, payload: `d=${'x'.repeat(100_000)}` });
    expectPage(signedOut, 403);
  });

  it('the tokens page and sign-out refuse a bad body with their pages too', async () => {
    const s = await signIn('ann');
    const before = await state();
    const revoke = await post({
      url: '/console/tokens/t_x/revoke',
      payload: 'csrf=%FF',
      headers: { cookie: s.cookie },
    });
    expectPage(revoke, 400);
    expect(revoke.text).toContain('id="console-error"');
    expect(revoke.text).toContain('aria-current="page">Tokens');
    const logout = await post({
      url: '/console/logout',
      type: 'application/json',
      payload: '{}',
      headers: { cookie: s.cookie },
    });
    expectPage(logout, 415);
    expect(await state()).toEqual(before);
  });

  it('a post to an unknown console path is the 404 page, whatever its body', async () => {
    const s = await signIn('ann');
    const answer = await post({
      url: `/console/drops/${slug}/nothing`,
      payload: 'x=%FF',
      headers: { cookie: s.cookie },
    });
    expectPage(answer, 404);
    expect(answer.text).toContain('Page not found');
  });
});

describe('/verify and the OAuth approval', () => {
  it('refuses a bad body on every /verify form with a page linking back to /verify', async () => {
    for (const url of ['/verify/decide', '/verify/logout', '/verify/callback']) {
      for (const bad of BAD_BODIES) {
        const answer = await post({ url, type: bad.type, payload: bad.payload });
        expectPage(answer, bad.status);
        expect(answer.text, `${url} ${bad.what}`).toMatch(bad.says);
        expect(answer.text).toContain('href="/verify"');
      }
      const large = await post({ url, payload: `code=${'x'.repeat(9_000)}` });
      expectPage(large, 413);
      expect(large.text).toContain('at most 8 KiB');
    }
  });

  it('answers a page even to a client that does not ask for HTML (these paths are pages)', async () => {
    const answer = await post({ url: '/verify/decide', payload: 'code=%FF', headers: { accept: '*/*' } });
    expectPage(answer, 400);
  });

  it('refuses a bad body on the OAuth approval with a page', async () => {
    for (const url of ['/verify/oauth/decide', '/verify/oauth/logout']) {
      for (const bad of BAD_BODIES) {
        const answer = await post({ url, type: bad.type, payload: bad.payload });
        expectPage(answer, bad.status);
        expect(answer.text).toMatch(/Connect again from your application/);
      }
    }
  });
});

describe('the passcode gate', () => {
  it('shows the gate again with the reason, sets no capability and counts no attempt', async () => {
    await h.call('POST', `/api/drops/${slug}/passcode`, { token, body: { passcode: 'open-sesame' } });
    for (const bad of BAD_BODIES) {
      const response = await h.app.inject({
        method: 'POST',
        url: `/p/${slug}/unlock?v=1`,
        headers: { 'content-type': bad.type, accept: BROWSER },
        payload: bad.payload.replace('title', 'passcode'),
      });
      expect(response.statusCode, bad.what).toBe(bad.status);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(response.body).toContain('id="gate-error"');
      expect(response.body).toContain(`action="/p/${slug}/unlock?v=1"`);
      expect(response.body).toContain('Enter the passcode again.');
    }
    const large = await h.app.inject({
      method: 'POST',
      url: `/p/${slug}/unlock`,
      headers: { 'content-type': FORM },
      payload: `passcode=${'x'.repeat(9_000)}`,
    });
    expect(large.statusCode).toBe(413);
    expect(large.body).toContain('at most 8 KiB');
    const right = await h.app.inject({
      method: 'POST',
      url: `/p/${slug}/unlock`,
      headers: { 'content-type': FORM },
      payload: 'passcode=open-sesame',
    });
    expect(right.statusCode).toBe(303);
  });
});

describe("the viewer's comment form", () => {
  it('refuses a bad body with the comment page and a way back to the drop; nothing is posted', async () => {
    const before = await state();
    for (const bad of BAD_BODIES) {
      const answer = await post({ url: `/p/${slug}/comments?v=1`, type: bad.type, payload: bad.payload });
      expectPage(answer, bad.status);
      expect(answer.text).toContain('id="comment-refused"');
      expect(answer.text).toContain(`href="/p/${slug}?v=1#comments"`);
    }
    const large = await post({ url: `/p/${slug}/comments`, payload: `body=${'x'.repeat(70_000)}` });
    expectPage(large, 413);
    expect(large.text).toContain('at most 64 KiB');
    expect(await state()).toEqual(before);
  });

  it('takes a 4000-character comment in any script (36 KB once percent-encoded)', async () => {
    const body = '漢'.repeat(4000);
    const payload = new URLSearchParams({ name: 'Guest', body }).toString();
    expect(Buffer.byteLength(payload)).toBeGreaterThan(36_000);
    const answer = await post({ url: `/p/${slug}/comments`, payload, headers: { 'sec-fetch-site': 'same-origin' } });
    expect(answer.status, answer.text.slice(0, 300)).toBe(303);
    const listed = await h.call('GET', `/api/drops/${slug}/comments`, { token });
    expect(listed.json.data[0].body).toBe(body);
  });
});

describe('the API keeps answering JSON', () => {
  it('a form body to /api/ is a JSON error, whatever Accept says', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/drops',
      headers: { authorization: `Bearer ${token}`, 'content-type': FORM, accept: BROWSER },
      payload: 'title=x&html=%FF',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('invalid_json');
  });
});
