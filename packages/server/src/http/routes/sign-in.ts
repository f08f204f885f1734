/**
 * Signing a human in through the configured identity provider (docs/api.md 5.4 and "Console"), shared by /verify and
 * the console: `beginSignIn()` remembers state, PKCE verifier and where to go on in the `hd_signin` cookie and sends
 * the browser to the provider; the provider sends it back to `/verify/callback` (the one redirect URI operators
 * register), which proves the identity, finds or creates the account (one per identity) and sets the one session of
 * the service's pages, then goes on to the page the sign-in began on.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AccountDeps, ensureAccount } from '../../domain/accounts.js';
import { formatUserCode } from '../../domain/device-flow.js';
import type { Account } from '../../domain/types.js';
import type { IdentityProvider } from '../../identity/index.js';
import { SignInError } from '../../identity/provider.js';
import { OAUTH_APPROVAL_PATH } from '../oauth-request.js';
import { type PageOptions, refusePage, servicePage, showPage } from '../page-reply.js';
import { localSignInPage, outcomePage } from '../pages/verify.js';
import type { TypedApp } from '../typed-app.js';
import { type SessionPayload, SIGN_IN, type WebSessions } from '../web-session.js';

/**
 * Where a sign-in goes on to: the device request being approved, an OAuth client's request being approved (its
 * signed form, oauth-approval.ts), or a console page.
 */
export type SignInTarget = { readonly userCode: string } | { readonly oauth: string } | { readonly console: string };

/** The signed payload of the sign-in cookie: what the provider's answer is checked against, and where to go on. */
interface SignInPayload {
  readonly state: string;
  readonly codeVerifier: string;
  readonly target: SignInTarget;
}

export interface SignInDeps {
  readonly baseUrl: string;
  readonly identity: IdentityProvider;
  readonly accounts: AccountDeps;
  readonly sessions: WebSessions;
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

const PAGE: PageOptions = servicePage();
const SIGN_IN_EXPIRED = 'This sign-in expired. Start again from the page you were on.';

/** A provider's message is safe to show; anything else is not. */
export const shownMessage = (error: unknown) => (error instanceof SignInError ? error.message : undefined);

const redirectUri = (deps: SignInDeps) => `${deps.baseUrl}/verify/callback`;

const pendingSignIn = (deps: SignInDeps, request: FastifyRequest) =>
  deps.sessions.read<SignInPayload>(request, SIGN_IN);

/** The code shown on the local sign-in form: the device request's, or none for the console. */
const shownCode = (target: SignInTarget) => ('userCode' in target ? formatUserCode(target.userCode) : '');

/** Starts a sign-in that goes on to `target`: the sign-in cookie, then 303 to the provider. */
export async function beginSignIn(
  deps: SignInDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  target: SignInTarget,
): Promise<FastifyReply> {
  const state = randomBytes(24).toString('base64url');
  const codeVerifier = randomBytes(32).toString('base64url');
  let location: string;
  try {
    location = await deps.identity.authorizationUrl({ state, codeVerifier, redirectUri: redirectUri(deps) });
  } catch (error) {
    request.log.warn({ err: error }, 'sign-in could not start');
    return refusePage(reply, 'provider_unreachable', outcomePage('error', shownMessage(error)), PAGE);
  }
  const payload: SignInPayload = { state, codeVerifier, target };
  reply.header('set-cookie', deps.sessions.set(SIGN_IN, payload));
  return reply.header('cache-control', 'no-store').redirect(location, 303);
}

/** GET /verify/local: the `local` provider's username form. */
function localSignInForm(deps: SignInDeps): Handler {
  return async (request, reply) => {
    const pending = pendingSignIn(deps, request);
    const state = (request.query as Record<string, unknown>).state;
    if (deps.identity.name !== 'local' || pending === undefined || pending.state !== state) {
      return refusePage(reply, 'sign_in_failed', outcomePage('error', SIGN_IN_EXPIRED), PAGE);
    }
    return showPage(reply, localSignInPage(pending.state, shownCode(pending.target), null), PAGE);
  };
}

/** The account the provider's answer proves, or the refusal page already sent. */
async function signedInAccount(
  deps: SignInDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: SignInPayload,
): Promise<{ readonly account: Account; readonly email?: string | undefined } | { readonly refused: FastifyReply }> {
  const form = request.method === 'POST' ? (request.body as Record<string, string>) : undefined;
  if (form !== undefined && request.headers.origin !== deps.sessions.origin) {
    return { refused: refusePage(reply, 'cross_site', outcomePage('error', 'Cross-site sign-in refused.'), PAGE) };
  }
  const params = { state: pending.state, codeVerifier: pending.codeVerifier, redirectUri: redirectUri(deps) };
  try {
    const who = await deps.identity.complete(new URL(request.url, deps.baseUrl), form, params);
    return { account: await ensureAccount(deps.accounts, who), email: who.email };
  } catch (error) {
    if (error instanceof SignInError && deps.identity.name === 'local') {
      const page = localSignInPage(pending.state, shownCode(pending.target), error.message);
      return { refused: refusePage(reply, 'sign_in_failed', page, PAGE) };
    }
    request.log.warn({ err: error }, 'sign-in failed');
    return { refused: refusePage(reply, 'sign_in_failed', outcomePage('error', shownMessage(error)), PAGE) };
  }
}

/** Only a console or viewer path is a place to go on to (never another site). */
const consolePath = (path: string) => (/^\/(?:console|p)(?:[/?#]|$)/.test(path) ? path : '/console');

/** Where a finished sign-in goes on to: the console page, the device request, or the OAuth request to approve. */
function nextOf(target: SignInTarget): string {
  if ('console' in target) return consolePath(target.console);
  if ('oauth' in target) return `${OAUTH_APPROVAL_PATH}?request=${encodeURIComponent(target.oauth)}`;
  return `/verify?code=${encodeURIComponent(formatUserCode(target.userCode))}`;
}

/**
 * GET or POST /verify/callback: completes the sign-in, signs the person in on every page of the service (one
 * session, web-session.ts), and goes on with a 303: the session cookie is Lax, so it is sent on that navigation even
 * after the provider's cross-site redirect.
 */
function providerCallback(deps: SignInDeps): Handler {
  return async (request, reply) => {
    const pending = pendingSignIn(deps, request);
    if (pending === undefined) return refusePage(reply, 'sign_in_failed', outcomePage('error', SIGN_IN_EXPIRED), PAGE);
    const signedIn = await signedInAccount(deps, request, reply, pending);
    if ('refused' in signedIn) return signedIn.refused;
    const { account, email } = signedIn;
    // The verified email goes into the session only: it is what the provider proved now, not kept with the account.
    const session: SessionPayload = {
      accountId: account.id,
      login: account.login,
      provider: account.provider,
      ...(email === undefined ? {} : { email }),
    };
    reply.header('set-cookie', [...deps.sessions.signIn(session), deps.sessions.clear(SIGN_IN)]);
    return reply.header('cache-control', 'no-store').redirect(nextOf(pending.target), 303);
  };
}

/** The provider's return: `/verify/local` (the local provider's form) and `/verify/callback`. */
export function registerSignInRoutes(app: TypedApp, deps: SignInDeps): void {
  app.get('/verify/local', { schema: { hide: true } }, localSignInForm(deps));
  app.get('/verify/callback', { schema: { hide: true } }, providerCallback(deps));
  app.post('/verify/callback', { schema: { hide: true } }, providerCallback(deps));
}
