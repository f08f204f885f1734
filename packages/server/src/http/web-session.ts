/**
 * The service's own browser sessions (docs/api.md 5.4 and "Console"): signed, expiring cookies, `HttpOnly`, host-only
 * (no `Domain`, so never sent to a content origin), `Secure` on https. Stateless, so every instance sharing the
 * signing key accepts them. A POST from one of our pages must carry the exact Origin of the service, a live session
 * and the CSRF token bound to that session cookie.
 */
import type { FastifyRequest } from 'fastify';
import type { Signer } from '../keys/signer.js';
import { cookieValue, serializeCookie } from './cookies.js';
import { formField } from './forms.js';

/** A cookie: its name, path, lifetime (also the signed payload's) and SameSite rule, and what its MACs are for. */
export interface CookieSpec {
  readonly name: string;
  readonly path: string;
  readonly ttlMs: number;
  readonly sameSite: 'Strict' | 'Lax';
  /** The signer purpose of the cookie's value. */
  readonly purpose: string;
  /** The signer purpose of the CSRF token bound to it. */
  readonly csrfPurpose: string;
}

/**
 * The one session of the service's own pages (docs/decisions/0032-one-session-forms-as-pages-short-claims.md): signing in at
 * /verify, the OAuth approval or the console signs the person in on all of them, and signing out anywhere ends it
 * everywhere. 7 days; Lax, so a link from a chat or a mail opens the console signed in and the provider's cross-site
 * redirect back lands signed in (every change is still a POST with the exact Origin and the CSRF token); path `/`,
 * so the viewer knows a drop's owner; host-only, so never sent to a drop's content origin.
 */
export const WEB_SESSION: CookieSpec = {
  name: 'hd_web',
  path: '/',
  ttlMs: 7 * 24 * 60 * 60_000,
  sameSite: 'Lax',
  purpose: 'session',
  csrfPurpose: 'csrf',
};

/** One sign-in in progress; Lax, since it must come back on the provider's cross-site redirect to the callback. */
export const SIGN_IN: CookieSpec = {
  name: 'hd_signin',
  path: '/verify',
  ttlMs: 10 * 60_000,
  sameSite: 'Lax',
  purpose: 'signin',
  csrfPurpose: 'signin-csrf',
};

/**
 * The two sessions before there was one (docs/decisions/0020-console-sessions.md): /verify's `hd_session` on path
 * `/verify` and the console's `hd_console`. No longer read; cleared at sign-in and sign-out, so that a browser stops
 * sending them.
 */
const EARLIER_SESSIONS: ReadonlyArray<Pick<CookieSpec, 'name' | 'path' | 'sameSite'>> = [
  { name: 'hd_session', path: '/verify', sameSite: 'Strict' },
  { name: 'hd_console', path: '/', sameSite: 'Lax' },
];

/** The signed payload of a session cookie: who signed in. */
export interface SessionPayload {
  readonly accountId: string;
  readonly login: string;
  readonly provider: string;
  /** A verified email the provider vouched for at sign-in (Identity.email); drives a drop's email rules. */
  readonly email?: string | undefined;
}

export interface WebSessions {
  /** The exact Origin our pages post from. */
  readonly origin: string;
  /** A Set-Cookie header that stores `payload`, signed, in the cookie. */
  set(spec: CookieSpec, payload: object): string;
  /** A Set-Cookie header that removes the cookie. */
  clear(spec: CookieSpec): string;
  /** The Set-Cookie headers that sign `session` in on every page of the service (WEB_SESSION). */
  signIn(session: SessionPayload): string[];
  /** The Set-Cookie headers that end the session on every page of the service. */
  signOut(): string[];
  /** The cookie's payload, when present, genuine and unexpired. */
  read<T extends object>(request: FastifyRequest, spec: CookieSpec): T | undefined;
  /** The CSRF token for the forms of a page rendered for this request's session cookie. */
  csrf(request: FastifyRequest, spec: CookieSpec): string;
  /** Whether `token` is the CSRF token of this request's session cookie (constant time, under every key). */
  csrfMatches(request: FastifyRequest, spec: CookieSpec, token: string): boolean;
  /** The session of a POST from our own page: exact Origin, a live session and its CSRF token; else undefined. */
  checkPost(request: FastifyRequest, spec: CookieSpec): SessionPayload | undefined;
}

export function createWebSessions(signer: Signer, baseUrl: string): WebSessions {
  const secure = baseUrl.startsWith('https:');
  const origin = new URL(baseUrl).origin;
  const header = (spec: CookieSpec, value: string, maxAgeSeconds: number) =>
    serializeCookie(spec.name, value, { path: spec.path, maxAgeSeconds, sameSite: spec.sameSite, secure });
  const raw = (request: FastifyRequest, spec: CookieSpec) => cookieValue(request.headers.cookie, spec.name);
  const read = <T extends object>(request: FastifyRequest, spec: CookieSpec) =>
    signer.verify<T>(spec.purpose, raw(request, spec));
  const set = (spec: CookieSpec, payload: object) =>
    header(spec, signer.sign(spec.purpose, payload, spec.ttlMs), spec.ttlMs / 1000);
  const clearEarlier = () =>
    EARLIER_SESSIONS.map((spec) =>
      serializeCookie(spec.name, '', { path: spec.path, maxAgeSeconds: 0, sameSite: spec.sameSite, secure }),
    );
  return {
    origin,
    set,
    clear: (spec) => header(spec, '', 0),
    signIn: (session) => [set(WEB_SESSION, session), ...clearEarlier()],
    signOut: () => [header(WEB_SESSION, '', 0), ...clearEarlier()],
    read,
    csrf: (request, spec) => signer.mac(spec.csrfPurpose, raw(request, spec) ?? ''),
    csrfMatches: (request, spec, token) => signer.matches(spec.csrfPurpose, raw(request, spec) ?? '', token),
    checkPost(request, spec) {
      if (request.headers.origin !== origin) return undefined;
      const session = read<SessionPayload>(request, spec);
      if (session === undefined) return undefined;
      // Checked under every key, so a page rendered before a key rotation still posts.
      const token = formField(request.body, 'csrf');
      return signer.matches(spec.csrfPurpose, raw(request, spec) ?? '', token) ? session : undefined;
    },
  };
}
