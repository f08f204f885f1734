/**
 * Sign-in with the `github` provider end to end, over real sockets, against a loopback stand-in for GitHub.
 * The browser is played by fetch with manual redirects and a small cookie jar.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectTokenOnce, pollFlow, type StartedFlow, startFlow } from './device-api.js';
import { type GitHubStandIn, startGitHubStandIn } from './github-standin.js';
import { createHarness, type Harness } from './helpers.js';
import { freePort } from './process.js';

let h: Harness;
let gh: GitHubStandIn;
let base: string;

beforeAll(async () => {
  gh = await startGitHubStandIn();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await createHarness({
    env: {
      HTMLDROP_BASE_URL: base,
      HTMLDROP_AUTH_PROVIDER: 'github',
      HTMLDROP_GITHUB_CLIENT_ID: gh.clientId,
      HTMLDROP_GITHUB_CLIENT_SECRET: gh.clientSecret,
      HTMLDROP_GITHUB_URL: gh.url,
      HTMLDROP_GITHUB_API_URL: gh.url,
    },
  });
  await h.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await h?.close();
  await gh?.close();
});

/** The cookies a browser would hold for this service (all of /verify's cookies are host-only). */
class CookieJar {
  readonly cookies = new Map<string, string>();
  store(response: Response): string[] {
    const set = response.headers.getSetCookie();
    for (const line of set) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return set;
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

interface Page {
  readonly status: number;
  readonly text: string;
  readonly setCookies: string[];
  readonly location: string | null;
}

async function get(url: string, jar?: CookieJar): Promise<Page> {
  const headers: Record<string, string> = {};
  if (jar !== undefined && url.startsWith(base) && jar.cookies.size > 0) headers.cookie = jar.header();
  const response = await fetch(url, { redirect: 'manual', headers });
  const setCookies = jar === undefined ? response.headers.getSetCookie() : jar.store(response);
  return {
    status: response.status,
    text: await response.text(),
    setCookies,
    location: response.headers.get('location'),
  };
}

async function postForm(path: string, fields: Record<string, string>, jar: CookieJar): Promise<Page> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      origin: base,
      cookie: jar.header(),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(fields).toString(),
  });
  const setCookies = jar.store(response);
  return {
    status: response.status,
    text: await response.text(),
    setCookies,
    location: response.headers.get('location'),
  };
}

const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');

function attribute(html: string, id: string, name: string): string {
  const tag = new RegExp(`<[^>]*\\bid="${id}"[^>]*>`).exec(html)?.[0] ?? '';
  const value = new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
  if (value === undefined) throw new Error(`no ${name} on #${id} in: ${html}`);
  return unescapeHtml(value);
}

const outcomeOf = (html: string) => /id="outcome" data-outcome="([a-z_]+)"/.exec(html)?.[1];

type Started = StartedFlow;

const start = (label: string) => startFlow(base, label);
const poll = async (started: Started): Promise<Record<string, unknown>> => ({
  ...(await pollFlow(base, started.poll_token)),
});

/** /verify → #sign-in → GitHub's authorize redirect; returns the callback URL GitHub sent the browser to. */
async function toCallback(started: Started, jar: CookieJar): Promise<URL> {
  const verify = await get(started.verification_url, jar);
  expect(verify.status).toBe(200);
  expect(verify.text).toContain(started.code);
  const login = await get(new URL(attribute(verify.text, 'sign-in', 'href'), base).toString(), jar);
  expect(login.status).toBe(303);
  expect(jar.cookies.has('hd_signin')).toBe(true);
  expect(login.location?.startsWith(`${gh.url}/login/oauth/authorize?`)).toBe(true);
  const authorize = await get(String(login.location), jar);
  expect(authorize.status).toBe(302);
  const callback = new URL(String(authorize.location));
  expect(callback.origin + callback.pathname).toBe(`${base}/verify/callback`);
  return callback;
}

/** A good callback goes on (303) to the confirm page, signed in; then Approve. */
async function approve(started: Started, jar: CookieJar, callback: URL): Promise<void> {
  const done = await get(callback.toString(), jar);
  expect(done.status, done.text).toBe(303);
  expect(jar.cookies.has('hd_web')).toBe(true);
  expect(jar.cookies.has('hd_signin')).toBe(false);
  const next = String(done.location);
  expect(next).toBe(`/verify?code=${started.code}`);
  const confirm = await get(`${base}${next}`, jar);
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain(gh.user.login);
  const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.text)?.[1] ?? '';
  const decided = await postForm('/verify/decide', { code: started.code, csrf, decision: 'approve' }, jar);
  expect(decided.status, decided.text).toBe(200);
  expect(outcomeOf(decided.text)).toBe('approved');
}

describe('sign-in with GitHub (stand-in)', () => {
  it('asks for read:user only, exchanges the code, reads the user, and the agent gets a working token', async () => {
    const started = await start('github e2e');
    const jar = new CookieJar();
    const before = { authorizations: gh.authorizations.length, exchanges: gh.exchanges.length };
    const callback = await toCallback(started, jar);

    const asked = gh.authorizations[before.authorizations];
    expect(asked).toMatchObject({
      clientId: gh.clientId,
      scope: 'read:user',
      redirectUri: `${base}/verify/callback`,
    });
    expect(asked?.state).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(callback.searchParams.get('state')).toBe(asked?.state);

    await approve(started, jar, callback);
    const exchange = gh.exchanges[before.exchanges];
    expect(exchange?.accept).toContain('application/json');
    expect(exchange?.body).toEqual({
      client_id: gh.clientId,
      client_secret: gh.clientSecret,
      code: asked?.code,
      redirect_uri: `${base}/verify/callback`,
    });
    expect(exchange?.answer.access_token).toEqual(expect.any(String));
    expect(gh.userRequests.at(-1)).toEqual({
      authorization: `Bearer ${String(exchange?.answer.access_token)}`,
      status: 200,
    });

    const { apiToken, userId } = await expectTokenOnce(base, started.poll_token);
    const verified = { api_token: apiToken, user_id: userId };
    const me = await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${String(verified.api_token)}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      user_id: verified.user_id,
      login: 'octo-alice',
      provider: 'github',
      token: { label: 'github e2e' },
    });
    // The numeric id is the subject: a renamed login stays the same account.
    expect((await h.store.findAccount(String(verified.user_id)))?.subject).toBe('4242');

    // A second sign-in of the same GitHub user is the same account, with a second token.
    const again = await start('github e2e 2');
    const jar2 = new CookieJar();
    await approve(again, jar2, await toCallback(again, jar2));
    const second = await poll(again);
    expect(second.user_id).toBe(verified.user_id);
    expect(second.api_token).not.toBe(verified.api_token);
  });

  it('refuses a callback whose state is not the one bound to this browser, without spending the code', async () => {
    const started = await start('wrong state');
    const jar = new CookieJar();
    const callback = await toCallback(started, jar);
    const exchanges = gh.exchanges.length;

    const forged = new URL(callback);
    forged.searchParams.set('state', 'x'.repeat(32));
    const refused = await get(forged.toString(), jar);
    expect(refused.status).toBe(400);
    expect(outcomeOf(refused.text)).toBe('error');
    expect(refused.text).toContain('does not match this browser');
    expect(refused.setCookies.filter((c) => c.startsWith('hd_web='))).toEqual([]);
    expect(jar.cookies.has('hd_web')).toBe(false);
    expect(gh.exchanges.length).toBe(exchanges);

    // Another browser (no sign-in cookie) replaying the genuine callback is refused too.
    const stranger = await get(callback.toString(), new CookieJar());
    expect(stranger.status).toBe(400);
    expect(outcomeOf(stranger.text)).toBe('error');
    expect(stranger.setCookies.filter((c) => c.startsWith('hd_web='))).toEqual([]);
    expect(gh.exchanges.length).toBe(exchanges);

    // The genuine answer still completes in the browser that started it.
    await approve(started, jar, callback);
    expect((await poll(started)).status).toBe('verified');
  });

  it('shows an error page, not a 500, when GitHub rejects the code or the user declines', async () => {
    const started = await start('bad code');
    const jar = new CookieJar();
    const callback = await toCallback(started, jar);

    const badCode = new URL(callback);
    badCode.searchParams.set('code', 'not-a-code-github-issued');
    const rejected = await get(badCode.toString(), jar);
    expect(rejected.status).toBe(400);
    expect(outcomeOf(rejected.text)).toBe('error');
    expect(rejected.text).toContain('bad_verification_code');
    expect(gh.exchanges.at(-1)?.answer).toEqual({ error: 'bad_verification_code' });
    expect(jar.cookies.has('hd_web')).toBe(false);

    const declined = new URL(`${base}/verify/callback`);
    declined.searchParams.set('error', 'access_denied');
    declined.searchParams.set('state', String(callback.searchParams.get('state')));
    const refused = await get(declined.toString(), jar);
    expect(refused.status).toBe(400);
    expect(outcomeOf(refused.text)).toBe('error');
    expect(refused.text).toContain('access_denied');
    expect(jar.cookies.has('hd_web')).toBe(false);

    // A code is single use: once exchanged, replaying the same callback fails cleanly.
    await approve(started, jar, callback);
    const replayJar = new CookieJar();
    const other = await start('replay');
    const otherCallback = await toCallback(other, replayJar);
    const replay = new URL(otherCallback);
    replay.searchParams.set('code', String(callback.searchParams.get('code')));
    const replayed = await get(replay.toString(), replayJar);
    expect(replayed.status).toBe(400);
    expect(replayed.text).toContain('bad_verification_code');
    expect((await poll(other)).status).toBe('pending');
  });
});
