/**
 * /verify: where the human signs in through the identity provider and approves or denies an agent's request
 * (docs/api.md 5.4). Approval only by POST, with a CSRF token bound to the session and an exact Origin check; a GET
 * never approves. Sessions are signed cookies (HttpOnly, SameSite=Strict, Secure on https); the pages cannot be
 * framed. One function per route; the guess budget for codes is the domain's (device-guards.ts).
 */

import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ensureAccount } from '../../domain/accounts.js';
import { decideDeviceFlow, formatUserCode, normalizeUserCode } from '../../domain/device-flow.js';
import { type GuardDeps, type GuessedLookup, guessUserCode } from '../../domain/device-guards.js';
import type { Account, DeviceRequest } from '../../domain/types.js';
import { SignInError } from '../../identity/provider.js';
import type { RouteContext, TypedApp } from '../app.js';
import { acceptFormPosts, formField } from '../forms.js';
import {
  confirmPage,
  continuePage,
  enterCodePage,
  localSignInPage,
  outcomePage,
  type RequestSummary,
  signInPage,
} from '../pages/verify.js';
import { cookieValue, serializeCookie } from '../signed-cookie.js';

/** A /verify cookie: its name, lifetime and SameSite rule (docs/api.md 5.4). */
interface CookieSpec {
  readonly name: string;
  /** Also the signed payload's lifetime. */
  readonly ttlMs: number;
  readonly sameSite: 'Strict' | 'Lax';
}

/** The signed-in human; Strict, so a cross-site request never carries it. */
const SESSION: CookieSpec = { name: 'hd_session', ttlMs: 60 * 60_000, sameSite: 'Strict' };
/** One sign-in in progress; Lax, since it must come back on the provider's cross-site redirect to the callback. */
const SIGNIN: CookieSpec = { name: 'hd_signin', ttlMs: 10 * 60_000, sameSite: 'Lax' };

/** The signed payload of the session cookie: who signed in. */
interface SessionPayload {
  readonly accountId: string;
  readonly login: string;
  readonly provider: string;
}

/** The signed payload of the sign-in cookie: what the provider's answer is checked against, and the code to go on to. */
interface SignInPayload {
  readonly state: string;
  readonly codeVerifier: string;
  /** Normalised (XXXXXXXX). */
  readonly userCode: string;
}

/**
 * Every page /verify refuses with, and its status (docs/api.md 5.4). The one place these statuses are chosen:
 * `refuse()` is the only writer of a page that is not a 200.
 */
const REFUSAL_STATUS = {
  /** GET /verify: no request has this code (the form again). */
  unknown_code: 404,
  /** Not a code at all (login, decide): the form again. */
  malformed_code: 400,
  /** The request expired, or was denied. */
  expired: 410,
  /** The request was already approved or denied; on decide, also a code no request has. */
  not_pending: 409,
  /** Too many wrong codes from this address: Retry-After. */
  too_many_guesses: 429,
  /** The sign-in cookie is missing, stale or for another sign-in, or the provider refused the sign-in. */
  sign_in_failed: 400,
  /** The provider could not be reached to start a sign-in. */
  provider_unreachable: 502,
  /** A POST that did not come from the service's own page (Origin; for decide and logout, session and CSRF too). */
  cross_site: 403,
  /** A decision other than approve or deny. */
  no_decision: 400,
} as const satisfies Record<string, number>;

type Refusal = keyof typeof REFUSAL_STATUS;

const NOT_A_CODE = 'That is not a valid code.';
const SIGN_IN_EXPIRED = 'This sign-in expired. Open the link from your agent again.';

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** What the /verify routes need, derived once from the route context. */
interface VerifyContext extends Pick<RouteContext, 'store' | 'clock' | 'signer' | 'identity' | 'device'> {
  readonly baseUrl: string;
  readonly guards: GuardDeps;
  /** Secure cookies, when the service is reached over https. */
  readonly secure: boolean;
  /** The one Origin a POST to /verify is taken from. */
  readonly origin: string;
  /** Where the provider sends the browser back. */
  readonly redirectUri: string;
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return (
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', PAGE_CSP)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      // Not no-referrer: with it, Chromium sends `Origin: null` on our own form posts and the Origin check fails.
      .header('referrer-policy', 'same-origin')
      .send(html)
  );
}

const show = (reply: FastifyReply, html: string) => sendPage(reply, 200, html);
const refuse = (reply: FastifyReply, refusal: Refusal, html: string) => sendPage(reply, REFUSAL_STATUS[refusal], html);

function tooManyGuesses(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds));
  return refuse(reply, 'too_many_guesses', outcomePage('rate_limited'));
}

/** A code whose request is no longer pending: expired (or denied), or already decided. */
function refuseClosed(reply: FastifyReply, kind: 'expired' | 'done' | 'pending'): FastifyReply {
  return kind === 'expired'
    ? refuse(reply, 'expired', outcomePage('expired'))
    : refuse(reply, 'not_pending', outcomePage('done'));
}

/** A provider's message is safe to show; anything else is not. */
const shownMessage = (error: unknown) => (error instanceof SignInError ? error.message : undefined);

const queryString = (request: FastifyRequest, name: string) => {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
};

function cookieHeader(v: VerifyContext, spec: CookieSpec, value: string, maxAgeSeconds: number): string {
  return serializeCookie(spec.name, value, {
    path: '/verify',
    maxAgeSeconds,
    sameSite: spec.sameSite,
    secure: v.secure,
  });
}

const setCookie = (v: VerifyContext, spec: CookieSpec, value: string) =>
  cookieHeader(v, spec, value, spec.ttlMs / 1000);
const clearCookie = (v: VerifyContext, spec: CookieSpec) => cookieHeader(v, spec, '', 0);

const cookieOf = (request: FastifyRequest, spec: CookieSpec) => cookieValue(request.headers.cookie, spec.name);

const sessionOf = (v: VerifyContext, request: FastifyRequest) =>
  v.signer.verify<SessionPayload>('session', cookieOf(request, SESSION));

const signInOf = (v: VerifyContext, request: FastifyRequest) =>
  v.signer.verify<SignInPayload>('signin', cookieOf(request, SIGNIN));

/** The CSRF token of the session cookie the request carries. */
const csrfFor = (v: VerifyContext, request: FastifyRequest) => v.signer.mac('csrf', cookieOf(request, SESSION) ?? '');

/** POSTs must come from our own pages: exact Origin, a live session and its CSRF token. */
function checkPost(v: VerifyContext, request: FastifyRequest): SessionPayload | undefined {
  if (request.headers.origin !== v.origin) return undefined;
  const session = sessionOf(v, request);
  if (session === undefined) return undefined;
  // Checked under every key, so a page rendered before a key rotation still posts.
  return v.signer.matches('csrf', cookieOf(request, SESSION) ?? '', formField(request.body, 'csrf'))
    ? session
    : undefined;
}

/** Looks a typed or posted code up, as a guess against the client address's budget (docs/api.md 5.4). */
const guess = (v: VerifyContext, request: FastifyRequest, input: string): Promise<GuessedLookup> =>
  guessUserCode(v.guards, v.device, request.ip, input);

const summaryOf = (v: VerifyContext, request: DeviceRequest): RequestSummary => ({
  code: formatUserCode(request.userCode),
  label: request.label,
  requestedAt: request.createdAt,
  now: v.clock.now(),
});

/** GET /verify: the code form; for a pending request, the sign-in page, or with a session the confirmation page. */
function startPage(v: VerifyContext): Handler {
  return async (request, reply) => {
    const input = queryString(request, 'code');
    if (input === undefined || input.trim() === '') return show(reply, enterCodePage(null));
    const found = await guess(v, request, input);
    if (found.kind === 'rate_limited') return tooManyGuesses(reply, found.retryAfterSeconds);
    if (found.kind === 'invalid')
      return refuse(reply, 'unknown_code', enterCodePage('No request has this code. Check it and try again.'));
    if (found.kind !== 'pending') return refuseClosed(reply, found.kind);
    const summary = summaryOf(v, found.request);
    const session = sessionOf(v, request);
    if (session === undefined) {
      const login = `/verify/login?code=${encodeURIComponent(summary.code)}`;
      return show(reply, signInPage(summary, v.identity.displayName, login));
    }
    const who = { login: session.login, provider: session.provider };
    return show(reply, confirmPage(summary, who, csrfFor(v, request)));
  };
}

/** GET /verify/login: remembers state, PKCE verifier and code in the sign-in cookie, then 303 to the provider. */
function loginRedirect(v: VerifyContext): Handler {
  return async (request, reply) => {
    const input = queryString(request, 'code');
    const userCode = input === undefined ? undefined : normalizeUserCode(input);
    if (userCode === undefined) return refuse(reply, 'malformed_code', enterCodePage(NOT_A_CODE));
    const state = randomBytes(24).toString('base64url');
    const codeVerifier = randomBytes(32).toString('base64url');
    let target: string;
    try {
      target = await v.identity.authorizationUrl({ state, codeVerifier, redirectUri: v.redirectUri });
    } catch (error) {
      request.log.warn({ err: error }, 'sign-in could not start');
      return refuse(reply, 'provider_unreachable', outcomePage('error', shownMessage(error)));
    }
    const payload: SignInPayload = { state, codeVerifier, userCode };
    reply.header('set-cookie', setCookie(v, SIGNIN, v.signer.sign('signin', payload, SIGNIN.ttlMs)));
    return reply.header('cache-control', 'no-store').redirect(target, 303);
  };
}

/** GET /verify/local: the `local` provider's username form. */
function localSignInForm(v: VerifyContext): Handler {
  return async (request, reply) => {
    const pending = signInOf(v, request);
    if (v.identity.name !== 'local' || pending === undefined || pending.state !== queryString(request, 'state')) {
      return refuse(reply, 'sign_in_failed', outcomePage('error', SIGN_IN_EXPIRED));
    }
    return show(reply, localSignInPage(pending.state, formatUserCode(pending.userCode), null));
  };
}

/** The account the provider's answer proves, or the refusal page already sent. */
async function signedInAccount(
  v: VerifyContext,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: SignInPayload,
): Promise<{ readonly account: Account } | { readonly refused: FastifyReply }> {
  const form = request.method === 'POST' ? (request.body as Record<string, string>) : undefined;
  if (form !== undefined && request.headers.origin !== v.origin)
    return { refused: refuse(reply, 'cross_site', outcomePage('error', 'Cross-site sign-in refused.')) };
  const params = { state: pending.state, codeVerifier: pending.codeVerifier, redirectUri: v.redirectUri };
  try {
    const who = await v.identity.complete(new URL(request.url, v.baseUrl), form, params);
    return { account: await ensureAccount(v.store, v.clock, who) };
  } catch (error) {
    if (error instanceof SignInError && v.identity.name === 'local') {
      const page = localSignInPage(pending.state, formatUserCode(pending.userCode), error.message);
      return { refused: refuse(reply, 'sign_in_failed', page) };
    }
    request.log.warn({ err: error }, 'sign-in failed');
    return { refused: refuse(reply, 'sign_in_failed', outcomePage('error', shownMessage(error))) };
  }
}

/** GET or POST /verify/callback: completes the sign-in, sets the session cookie and goes on to the code. */
function providerCallback(v: VerifyContext): Handler {
  return async (request, reply) => {
    const pending = signInOf(v, request);
    if (pending === undefined) return refuse(reply, 'sign_in_failed', outcomePage('error', SIGN_IN_EXPIRED));
    const signedIn = await signedInAccount(v, request, reply, pending);
    if ('refused' in signedIn) return signedIn.refused;
    const { account } = signedIn;
    const session: SessionPayload = { accountId: account.id, login: account.login, provider: account.provider };
    reply.header('set-cookie', [
      setCookie(v, SESSION, v.signer.sign('session', session, SESSION.ttlMs)),
      clearCookie(v, SIGNIN),
    ]);
    // A page that navigates on, rather than a redirect: after the provider's cross-site redirect, a same-site
    // navigation is needed for the SameSite=Strict session cookie to be sent.
    return show(reply, continuePage(`/verify?code=${encodeURIComponent(formatUserCode(pending.userCode))}`));
  };
}

/** POST /verify/decide: approves or denies a pending request for the signed-in account. */
function decide(v: VerifyContext): Handler {
  return async (request, reply) => {
    const session = checkPost(v, request);
    if (session === undefined) {
      const why = 'This approval did not come from your signed-in verification page. Open the link again.';
      return refuse(reply, 'cross_site', outcomePage('error', why));
    }
    const userCode = normalizeUserCode(formField(request.body, 'code'));
    if (userCode === undefined) return refuse(reply, 'malformed_code', enterCodePage(NOT_A_CODE));
    const decision = formField(request.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny')
      return refuse(reply, 'no_decision', outcomePage('error', 'Choose Approve or Deny.'));
    const choice = decision === 'approve' ? { approve: session.accountId } : 'deny';
    if (await decideDeviceFlow(v.device, userCode, choice))
      return show(reply, outcomePage(decision === 'approve' ? 'approved' : 'denied'));
    // Not pending: say why, counting unknown codes against the same guess budget as the code form.
    const found = await guess(v, request, userCode);
    if (found.kind === 'rate_limited') return tooManyGuesses(reply, found.retryAfterSeconds);
    if (found.kind === 'invalid') return refuse(reply, 'not_pending', outcomePage('invalid'));
    return refuseClosed(reply, found.kind);
  };
}

/** POST /verify/logout: ends the session (same checks as decide). */
function logout(v: VerifyContext): Handler {
  return async (request, reply) => {
    if (checkPost(v, request) === undefined)
      return refuse(reply, 'cross_site', outcomePage('error', 'Sign-out refused.'));
    reply.header('set-cookie', clearCookie(v, SESSION));
    return show(reply, enterCodePage(null));
  };
}

export function registerVerifyRoutes(app: TypedApp, ctx: RouteContext): void {
  const { config } = ctx;
  const v: VerifyContext = {
    store: ctx.store,
    clock: ctx.clock,
    signer: ctx.signer,
    identity: ctx.identity,
    device: ctx.device,
    baseUrl: config.baseUrl,
    guards: { counter: ctx.counter, clock: ctx.clock, limits: config.limits },
    secure: config.baseUrl.startsWith('https:'),
    origin: new URL(config.baseUrl).origin,
    redirectUri: `${config.baseUrl}/verify/callback`,
  };
  app.register(async (verify) => {
    acceptFormPosts(verify);
    verify.get('/verify', { schema: { hide: true } }, startPage(v));
    verify.get('/verify/login', { schema: { hide: true } }, loginRedirect(v));
    verify.get('/verify/local', { schema: { hide: true } }, localSignInForm(v));
    verify.get('/verify/callback', { schema: { hide: true } }, providerCallback(v));
    verify.post('/verify/callback', { schema: { hide: true } }, providerCallback(v));
    verify.post('/verify/decide', { schema: { hide: true } }, decide(v));
    verify.post('/verify/logout', { schema: { hide: true } }, logout(v));
  });
}
