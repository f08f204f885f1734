/**
 * A person in the console, for the suites that drive its forms without a browser: sign in through the local
 * provider, read the session's CSRF token, GET a page and POST a form as the page would (with `Origin`). The harness
 * and the origin are read at each call, so a suite may start a new harness per test.
 */
import { expect } from 'vitest';
import type { Harness } from './helpers.js';

export interface ConsoleSession {
  readonly cookie: string;
  readonly csrf: string;
}

type Fields = Record<string, string> | Array<[string, string]> | URLSearchParams;

const pair = (header: string) => header.split(';')[0] ?? '';
const cookiesOf = (setCookie: string | string[] | undefined) => [setCookie ?? []].flat();

export function consoleClient(current: () => { readonly harness: Harness; readonly origin: string }) {
  const get = async (url: string, cookie: string) => {
    const response = await current().harness.app.inject({ method: 'GET', url, headers: { cookie } });
    return { status: response.statusCode, text: response.body };
  };

  const post = async (url: string, fields: Fields, headers: Record<string, string>) => {
    const response = await current().harness.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });
    return { status: response.statusCode, text: response.body, headers: response.headers };
  };

  /** Signs `login` in through the local provider, as console.test.ts does, and reads the session's CSRF token. */
  const signIn = async (login: string): Promise<ConsoleSession> => {
    const { harness, origin } = current();
    const begin = await harness.app.inject({ method: 'GET', url: '/console/login?next=/console' });
    const state = new URL(String(begin.headers.location), origin).searchParams.get('state') ?? '';
    const signin = pair(cookiesOf(begin.headers['set-cookie'])[0] ?? '');
    const done = await post('/verify/callback', { state, username: login }, { cookie: signin, origin });
    expect(done.status).toBe(303);
    const cookie = pair(cookiesOf(done.headers['set-cookie']).find((c) => c.startsWith('hd_web=')) ?? '');
    const csrf = /name="csrf" value="([^"]+)"/.exec((await get('/console', cookie)).text)?.[1] ?? '';
    expect(csrf).not.toBe('');
    return { cookie, csrf };
  };

  /** A form posted from the signed-in page: its CSRF token (unless `fields` names one), then `fields`. */
  const as = (s: ConsoleSession, url: string, fields: Record<string, string> | Array<[string, string]> = []) => {
    const entries = Array.isArray(fields) ? fields : Object.entries(fields);
    const csrf: Array<[string, string]> = entries.some(([name]) => name === 'csrf') ? [] : [['csrf', s.csrf]];
    return post(url, [...csrf, ...entries], { cookie: s.cookie, origin: current().origin });
  };

  return { get, post, signIn, as };
}
