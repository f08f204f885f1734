/**
 * /verify: where the human signs in through the identity provider and approves or denies an agent's request
 * (docs/api.md 5.4). Approval only by POST, with a CSRF token bound to the session and an exact Origin check; a GET
 * never approves. The session is the service's one signed cookie (HttpOnly, SameSite=Lax, Secure on https;
 * web-session.ts); the pages cannot be framed. Signing in is shared with the console (sign-in.ts). One function per
 * route; the guess budget for codes is the domain's (device-guards.ts).
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { AccountDeps } from '../../domain/accounts.js';
import type { Clock } from '../../domain/clock.js';
import { type DeviceFlowDeps, decideDeviceFlow, formatUserCode, normalizeUserCode } from '../../domain/device-flow.js';
import { type GuardDeps, type GuessedLookup, guessUserCode } from '../../domain/device-guards.js';
import type { DeviceRequest } from '../../domain/types.js';
import type { IdentityProvider } from '../../identity/index.js';
import { acceptFormPosts, type FormRefusal, formField, SMALL_FORM_BYTES } from '../forms.js';
import { refusePage, servicePage, showPage } from '../page-reply.js';
import { refusedFormPage } from '../pages/layout.js';
import { confirmPage, enterCodePage, outcomePage, type RequestSummary, signInPage } from '../pages/verify.js';
import type { TypedApp } from '../typed-app.js';
import { type SessionPayload, WEB_SESSION, type WebSessions } from '../web-session.js';
import { beginSignIn, registerSignInRoutes, type SignInDeps } from './sign-in.js';

/**
 * The refusals /verify answers with (docs/api.md 5.4), statuses from the error catalogue like every page's:
 * not_found (no request has this code), invalid_arg (not a code; neither approve nor deny), expired (expired or
 * denied), already_decided (approved or denied before; on decide, also a code no request has), rate_limited (too
 * many wrong codes: Retry-After), sign_in_failed, provider_unreachable, cross_site (a POST not from our page).
 */
type Refusal =
  | 'not_found'
  | 'invalid_arg'
  | 'expired'
  | 'already_decided'
  | 'rate_limited'
  | 'sign_in_failed'
  | 'provider_unreachable'
  | 'cross_site';

const NOT_A_CODE = 'That is not a valid code.';

/** What the /verify routes need, derived once from their deps. */
interface VerifyContext extends SignInDeps {
  readonly clock: Clock;
  readonly device: DeviceFlowDeps;
  readonly guards: GuardDeps;
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

const PAGE = servicePage();
const show = (reply: FastifyReply, html: string) => showPage(reply, html, PAGE);
const refuse = (reply: FastifyReply, refusal: Refusal, html: string, retryAfterSeconds?: number) =>
  refusePage(reply, refusal, html, retryAfterSeconds === undefined ? PAGE : { ...PAGE, retryAfterSeconds });

function tooManyGuesses(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  return refuse(reply, 'rate_limited', outcomePage('rate_limited'), retryAfterSeconds);
}

/** A code whose request is no longer pending: expired (or denied), or already decided. */
function refuseClosed(reply: FastifyReply, kind: 'expired' | 'done' | 'pending'): FastifyReply {
  return kind === 'expired'
    ? refuse(reply, 'expired', outcomePage('expired'))
    : refuse(reply, 'already_decided', outcomePage('done'));
}

const queryString = (request: FastifyRequest, name: string) => {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
};

const sessionOf = (v: VerifyContext, request: FastifyRequest) => v.sessions.read<SessionPayload>(request, WEB_SESSION);

/** POSTs must come from our own pages: exact Origin, a live session and its CSRF token. */
const checkPost = (v: VerifyContext, request: FastifyRequest) => v.sessions.checkPost(request, WEB_SESSION);

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
      return refuse(reply, 'not_found', enterCodePage('No request has this code. Check it and try again.'));
    if (found.kind !== 'pending') return refuseClosed(reply, found.kind);
    const summary = summaryOf(v, found.request);
    const session = sessionOf(v, request);
    if (session === undefined) {
      const login = `/verify/login?code=${encodeURIComponent(summary.code)}`;
      return show(reply, signInPage(summary, v.identity.displayName, login));
    }
    const who = { login: session.login, provider: session.provider };
    return show(reply, confirmPage(summary, who, v.sessions.csrf(request, WEB_SESSION)));
  };
}

/** GET /verify/login: signs in through the provider, going on to the code's confirmation (sign-in.ts). */
function loginRedirect(v: VerifyContext): Handler {
  return async (request, reply) => {
    const input = queryString(request, 'code');
    const userCode = input === undefined ? undefined : normalizeUserCode(input);
    if (userCode === undefined) return refuse(reply, 'invalid_arg', enterCodePage(NOT_A_CODE));
    return beginSignIn(v, request, reply, { userCode });
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
    if (userCode === undefined) return refuse(reply, 'invalid_arg', enterCodePage(NOT_A_CODE));
    const decision = formField(request.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny')
      return refuse(reply, 'invalid_arg', outcomePage('error', 'Choose Approve or Deny.'));
    const choice = decision === 'approve' ? { approve: session.accountId } : 'deny';
    if (await decideDeviceFlow(v.device, userCode, choice))
      return show(reply, outcomePage(decision === 'approve' ? 'approved' : 'denied'));
    // Not pending: say why, counting unknown codes against the same guess budget as the code form.
    const found = await guess(v, request, userCode);
    if (found.kind === 'rate_limited') return tooManyGuesses(reply, found.retryAfterSeconds);
    if (found.kind === 'invalid') return refuse(reply, 'already_decided', outcomePage('invalid'));
    return refuseClosed(reply, found.kind);
  };
}

/** POST /verify/logout: ends the session (same checks as decide). */
function logout(v: VerifyContext): Handler {
  return async (request, reply) => {
    if (checkPost(v, request) === undefined)
      return refuse(reply, 'cross_site', outcomePage('error', 'Sign-out refused.'));
    reply.header('set-cookie', v.sessions.signOut());
    return show(reply, enterCodePage(null));
  };
}

/** A /verify form refused before its handler ran, or anything failing in /verify: a page, never JSON. */
const refuseForm: FormRefusal = async (_request, reply, error) => {
  const next = { href: '/verify', text: 'Enter a code from your agent' };
  return refusePage(reply, error, refusedFormPage(error.message, next, error.status >= 500), PAGE);
};

/** What /verify uses: the provider, accounts, the device flow and its guess budget, the web sessions. */
export interface VerifyRouteDeps {
  readonly config: Config;
  readonly accounts: AccountDeps;
  readonly clock: Clock;
  readonly identity: IdentityProvider;
  readonly device: DeviceFlowDeps;
  readonly guards: GuardDeps;
  readonly sessions: WebSessions;
}

export async function verifyRoutes(app: TypedApp, { config, ...deps }: VerifyRouteDeps): Promise<void> {
  const v: VerifyContext = { ...deps, baseUrl: config.baseUrl };
  app.register(async (verify) => {
    acceptFormPosts(verify, { bodyLimit: SMALL_FORM_BYTES, refuse: refuseForm });
    verify.get('/verify', { schema: { hide: true } }, startPage(v));
    verify.get('/verify/login', { schema: { hide: true } }, loginRedirect(v));
    registerSignInRoutes(verify, v);
    verify.post('/verify/decide', { schema: { hide: true } }, decide(v));
    verify.post('/verify/logout', { schema: { hide: true } }, logout(v));
  });
}
