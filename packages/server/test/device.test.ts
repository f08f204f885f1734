/** The device-code endpoints and /verify through inject(), with the local provider. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, createTestClock, type Harness, type Reply } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  // A stopped clock keeps every rate window of these tests (guesses, polls) inside one window.
  h = await createHarness({ clock: createTestClock() });
});
afterAll(() => h.close());

const ORIGIN = 'http://drops.test';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const cookiesOf = (reply: Reply) =>
  ([reply.headers['set-cookie'] ?? []].flat() as string[])
    .map((c) => c.split(';')[0] ?? '')
    .filter((c) => !c.endsWith('='));

/** Signs in through /verify with the local provider; returns the session cookie header. */
async function signIn(code: string, username: string): Promise<string> {
  const login = await h.call('GET', `/verify/login?code=${code}`);
  expect(login.status).toBe(303);
  const signinCookie = cookiesOf(login).join('; ');
  const local = await h.call('GET', String(login.headers.location), { headers: { cookie: signinCookie } });
  expect(local.status).toBe(200);
  const state = /name="state" value="([^"]+)"/.exec(local.text)?.[1] ?? '';
  const done = await h.call('POST', '/verify/callback', {
    rawBody: form({ state, username }),
    headers: { cookie: signinCookie, 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
  });
  // Signed in: on to the code's confirmation page, with the session (and nothing else) set.
  expect(done.status, done.text).toBe(303);
  expect(done.headers.location).toBe(`/verify?code=${code}`);
  return cookiesOf(done).join('; ');
}

async function confirmPage(code: string, cookie: string) {
  const page = await h.call('GET', `/verify?code=${code}`, { headers: { cookie } });
  expect(page.status).toBe(200);
  return { page, csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '' };
}

/** `origin` null sends no Origin header. */
function decide(code: string, cookie: string, csrf: string, decision: string, origin: string | null = ORIGIN) {
  return h.call('POST', '/verify/decide', {
    rawBody: form({ code, csrf, decision }),
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...(origin === null ? {} : { origin }) },
  });
}

describe('POST /api/auth/start and GET /api/auth/poll', () => {
  it('starts a flow with the documented fields and no-store', async () => {
    const reply = await h.call('POST', '/api/auth/start', { body: { label: 'x'.repeat(100) } });
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.json).toEqual({
      code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/),
      verification_url: `http://drops.test/verify?code=${reply.json.code}`,
      poll_token: expect.any(String),
      expires_in: 600,
      poll_interval: 2,
    });
    const empty = await h.call('POST', '/api/auth/start');
    expect(empty.status).toBe(200);
  });

  it('answers 400 token_required without a token, and not_found for an unknown one', async () => {
    const missing = await h.call('GET', '/api/auth/poll');
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('token_required');
    const unknown = await h.call('GET', '/api/auth/poll?token=nope');
    expect(unknown.json).toEqual({ status: 'not_found' });
    expect(unknown.headers['cache-control']).toBe('no-store');
  });

  it('runs the whole flow: sign in, approve, one token, then claimed; the token works', async () => {
    const start = (await h.call('POST', '/api/auth/start', { body: { label: 'ci box' } })).json;
    const poll = () => h.call('GET', `/api/auth/poll?token=${encodeURIComponent(start.poll_token)}`);
    expect((await poll()).json).toEqual({ status: 'pending' });
    const anonymous = await h.call('GET', `/verify?code=${start.code}`);
    expect(anonymous.text).toContain(start.code);
    expect(anonymous.text).toContain('ci box');
    expect(anonymous.headers['x-frame-options']).toBe('DENY');
    expect(anonymous.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const cookie = await signIn(start.code, 'dana');
    const { csrf } = await confirmPage(start.code, cookie);
    const approved = await decide(start.code, cookie, csrf, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.text).toContain('data-outcome="approved"');
    const verified = (await poll()).json;
    expect(verified).toEqual({
      status: 'verified',
      api_token: expect.stringMatching(/^hd_/),
      user_id: expect.stringMatching(/^u_/),
    });
    expect((await poll()).json).toEqual({ status: 'claimed' });
    const me = await h.call('GET', '/api/me', { token: verified.api_token });
    expect(me.json).toMatchObject({ user_id: verified.user_id, login: 'dana', token: { label: 'ci box' } });
  });

  it('gives a second, independent token to the same account on a second sign-in', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) {
      const start = (await h.call('POST', '/api/auth/start', { body: { label: `machine ${i}` } })).json;
      const cookie = await signIn(start.code, 'erik');
      const { csrf } = await confirmPage(start.code, cookie);
      await decide(start.code, cookie, csrf, 'approve');
      tokens.push((await h.call('GET', `/api/auth/poll?token=${encodeURIComponent(start.poll_token)}`)).json.api_token);
    }
    const [a, b] = await Promise.all(tokens.map((t) => h.call('GET', '/api/me', { token: t })));
    expect(a?.json.user_id).toBe(b?.json.user_id);
    expect(a?.json.token.id).not.toBe(b?.json.token.id);
    expect((await h.call('GET', '/api/tokens', { token: tokens[0] })).json).toHaveLength(2);
  });

  it('moves a denied request to expired', async () => {
    const start = (await h.call('POST', '/api/auth/start')).json;
    const cookie = await signIn(start.code, 'fay');
    const { csrf } = await confirmPage(start.code, cookie);
    expect((await decide(start.code, cookie, csrf, 'deny')).text).toContain('data-outcome="denied"');
    expect((await h.call('GET', `/api/auth/poll?token=${encodeURIComponent(start.poll_token)}`)).json.status).toBe(
      'expired',
    );
  });
});

describe('polling and guessing are bounded', () => {
  it('answers polls far faster than poll_interval with 200 pending and Retry-After, without looking', async () => {
    // A stopped clock: the 61 polls must fall in one minute window, whatever the wall clock does.
    const fixed = await createHarness({ clock: createTestClock(Date.UTC(2026, 10, 21, 12, 0, 10)) });
    try {
      const poll = () => fixed.app.inject({ url: '/api/auth/poll?token=fast-poller' });
      for (let i = 0; i < 60; i++) expect((await poll()).json()).toEqual({ status: 'not_found' });
      const throttled = await poll();
      expect(throttled.statusCode).toBe(200);
      expect(throttled.json()).toEqual({ status: 'pending' });
      expect(throttled.headers['retry-after']).toBe('50');
    } finally {
      await fixed.close();
    }
  });

  it('refuses a deeply nested body, never with a 500: 413 above 1 KiB, 400 within it', async () => {
    const nested = (depth: number) => `{"label":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const headers = { 'content-type': 'application/json' };
    const huge = await h.call('POST', '/api/auth/start', { rawBody: nested(200_000), headers });
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe('body_too_large');
    const small = await h.call('POST', '/api/auth/start', { rawBody: nested(400), headers });
    expect(small.status).toBe(400);
    expect(small.json.error.code).toBe('invalid_arg');
  });

  it('counts unknown codes posted to /verify/decide as guesses', async () => {
    const start = (await h.call('POST', '/api/auth/start')).json;
    const cookie = await signIn(start.code, 'guesser');
    const { csrf } = await confirmPage(start.code, cookie);
    const guess = () =>
      h.app.inject({
        method: 'POST',
        url: '/verify/decide',
        remoteAddress: '192.0.2.77',
        payload: form({ code: 'ZZZZ-ZZZZ', csrf, decision: 'approve' }),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
      });
    for (let i = 0; i < 20; i++) expect((await guess()).statusCode).toBe(409);
    expect((await guess()).statusCode).toBe(429);
  });
});

describe('approval is protected', () => {
  it('never approves on GET, without the right Origin, without the CSRF token or with another session', async () => {
    const start = (await h.call('POST', '/api/auth/start')).json;
    const cookie = await signIn(start.code, 'gus');
    const { csrf } = await confirmPage(start.code, cookie);
    const other = await signIn(start.code, 'mallory');
    const attempts = [
      await h.call('GET', `/verify/decide?code=${start.code}&csrf=${csrf}&decision=approve`, { headers: { cookie } }),
      await decide(start.code, cookie, csrf, 'approve', null),
      await decide(start.code, cookie, csrf, 'approve', 'null'),
      await decide(start.code, cookie, csrf, 'approve', 'http://evil.test'),
      await decide(start.code, cookie, 'forged', 'approve'),
      await decide(start.code, '', csrf, 'approve'),
      await decide(start.code, other, csrf, 'approve'),
    ];
    expect(attempts.map((a) => a.status)).toEqual([404, 403, 403, 403, 403, 403, 403]);
    expect((await h.call('GET', `/api/auth/poll?token=${encodeURIComponent(start.poll_token)}`)).json.status).toBe(
      'pending',
    );
  });

  it('rate limits wrong-code guesses per client address', async () => {
    const guess = (code: string) => h.app.inject({ url: `/verify?code=${code}`, remoteAddress: '192.0.2.50' });
    for (let i = 0; i < 20; i++) expect((await guess('ZZZZ-ZZZZ')).statusCode).toBe(404);
    expect((await guess('ZZZZ-ZZZZ')).statusCode).toBe(429);
    expect((await h.app.inject({ url: '/verify?code=ZZZZ-ZZZZ', remoteAddress: '192.0.2.51' })).statusCode).toBe(404);
  });

  it('explains unknown and malformed codes on a clear page', async () => {
    const reply = await h.call('GET', '/verify?code=nonsense');
    expect(reply.status).toBe(404);
    expect(reply.text).toContain('No request has this code');
    expect((await h.call('GET', '/verify')).text).toContain('name="code"');
  });
});
