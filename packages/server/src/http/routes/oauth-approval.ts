/**
 * /verify/oauth: where the human signs in through the identity provider and approves or denies an MCP client's
 * OAuth request (docs/api.md, "Remote MCP and OAuth"), built like /verify: the same session (web-session.ts) and
 * sign-in (sign-in.ts), approval only by POST with the session's CSRF token and an exact Origin, unframeable pages.
 * The request arrives signed by /oauth/authorize (oauth-request.ts), so nothing is stored before the human decides;
 * approving issues a one-time code and sends the browser back to the client's exact redirect URI, with the RFC 9207
 * `iss`; denying sends `error=access_denied`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { AccountDeps } from '../../domain/accounts.js';
import { issueCode, type OAuthDeps, redirectUriAt } from '../../domain/oauth.js';
import type { OAuthClient } from '../../domain/types.js';
import type { IdentityProvider } from '../../identity/index.js';
import type { Signer } from '../../keys/signer.js';
import { acceptFormPosts, type FormRefusal, formField, SMALL_FORM_BYTES } from '../forms.js';
import { AUTHORIZATION_PURPOSE, type AuthorizationRequest, OAUTH_APPROVAL_PATH } from '../oauth-request.js';
import { refusePage, servicePage, showPage } from '../page-reply.js';
import { refusedFormPage } from '../pages/layout.js';
import { type ClientSummary, oauthConfirmPage, oauthOutcomePage, oauthSignInPage } from '../pages/oauth.js';
import type { TypedApp } from '../typed-app.js';
import { type SessionPayload, WEB_SESSION, type WebSessions } from '../web-session.js';
import { beginSignIn, type SignInDeps } from './sign-in.js';

interface ApprovalContext extends SignInDeps {
  readonly oauth: OAuthDeps;
  readonly signer: Signer;
}

/** A live request and its client, or the outcome page that says why there is none. */
type Pending =
  | {
      readonly request: AuthorizationRequest;
      readonly signed: string;
      readonly client: OAuthClient;
      redirectUri: string;
    }
  | { readonly refused: 'expired' | 'unknown_client' };

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

const PAGE = servicePage();

/**
 * The CSP source a redirect URI's answer goes to: its origin when that is a plain host source, else its scheme
 * (`cursor:`, or `http:` for `[::1]`, which CSP cannot name as a host). Never anything that could end the directive.
 */
function redirectSource(uri: string): string {
  const url = new URL(uri);
  return /^https?:\/\/[a-z0-9.-]+(?::\d+)?$/.test(url.origin) ? url.origin : url.protocol;
}

async function pendingOf(a: ApprovalContext, signed: string): Promise<Pending> {
  const request = a.signer.verify<AuthorizationRequest>(AUTHORIZATION_PURPOSE, signed);
  if (request === undefined) return { refused: 'expired' };
  const client = await a.oauth.store.findOAuthClient(request.c);
  const redirectUri = client === undefined ? undefined : redirectUriAt(client.redirectUris, request.i, request.p);
  if (client === undefined || redirectUri === undefined) return { refused: 'unknown_client' };
  return { request, signed, client, redirectUri };
}

const refuse = (reply: FastifyReply, outcome: 'expired' | 'unknown_client' | 'cross_site' | 'invalid') =>
  refusePage(
    reply,
    ({ cross_site: 'cross_site', invalid: 'invalid_arg', expired: 'expired', unknown_client: 'not_found' } as const)[
      outcome
    ],
    oauthOutcomePage(outcome),
    PAGE,
  );

const requestParam = (request: FastifyRequest) => {
  const value = (request.query as Record<string, unknown>).request;
  return typeof value === 'string' ? value : '';
};

const summaryOf = (pending: { client: OAuthClient; redirectUri: string }): ClientSummary => ({
  name: pending.client.name,
  redirectUri: pending.redirectUri,
});

/** GET /verify/oauth: the sign-in page, or with a session the approval page. */
function approvalPage(a: ApprovalContext): Handler {
  return async (request, reply) => {
    const pending = await pendingOf(a, requestParam(request));
    if ('refused' in pending) return refuse(reply, pending.refused);
    const session = a.sessions.read<SessionPayload>(request, WEB_SESSION);
    const signedParam = encodeURIComponent(pending.signed);
    if (session === undefined) {
      const login = `${OAUTH_APPROVAL_PATH}/login?request=${signedParam}`;
      return showPage(reply, oauthSignInPage(summaryOf(pending), a.identity.displayName, login), PAGE);
    }
    const who = { login: session.login, provider: session.provider };
    const fields = { request: pending.signed, csrf: a.sessions.csrf(request, WEB_SESSION) };
    const page = servicePage(undefined, [redirectSource(pending.redirectUri)]);
    return showPage(reply, oauthConfirmPage(summaryOf(pending), who, fields), page);
  };
}

/** GET /verify/oauth/login: signs in through the provider, going on to the approval page. */
function loginRedirect(a: ApprovalContext): Handler {
  return async (request, reply) => {
    const pending = await pendingOf(a, requestParam(request));
    if ('refused' in pending) return refuse(reply, pending.refused);
    return beginSignIn(a, request, reply, { oauth: pending.signed });
  };
}

/** Where the browser goes back to the client: its redirect URI with the answer's parameters. */
function answerUri(a: ApprovalContext, redirectUri: string, state: string | undefined, answer: Record<string, string>) {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(answer)) url.searchParams.set(name, value);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', a.baseUrl);
  return url.href;
}

/** POST /verify/oauth/decide: approves (a one-time code) or denies, then back to the client. */
function decide(a: ApprovalContext): Handler {
  return async (request, reply) => {
    const session = a.sessions.checkPost(request, WEB_SESSION);
    if (session === undefined) return refuse(reply, 'cross_site');
    const pending = await pendingOf(a, formField(request.body, 'request'));
    if ('refused' in pending) return refuse(reply, pending.refused);
    const decision = formField(request.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny') return refuse(reply, 'invalid');
    const { request: req, client, redirectUri } = pending;
    let answer: Record<string, string> = { error: 'access_denied', error_description: 'The user denied the request.' };
    if (decision === 'approve') {
      const approval = { clientId: client.id, accountId: session.accountId, codeChallenge: req.ch, redirectUri };
      answer = { code: await issueCode(a.oauth, { ...approval, resource: req.r ?? null }) };
    }
    return reply.header('cache-control', 'no-store').redirect(answerUri(a, redirectUri, req.s, answer), 303);
  };
}

/** POST /verify/oauth/logout: ends the session and shows the request's sign-in page again. */
function logout(a: ApprovalContext): Handler {
  return async (request, reply) => {
    if (a.sessions.checkPost(request, WEB_SESSION) === undefined) return refuse(reply, 'cross_site');
    reply.header('set-cookie', a.sessions.signOut());
    const back = `${OAUTH_APPROVAL_PATH}?request=${encodeURIComponent(formField(request.body, 'request'))}`;
    return reply.header('cache-control', 'no-store').redirect(back, 303);
  };
}

/** A form refused before its handler ran, or anything failing here: a page (the request is unknown by then). */
const refuseForm: FormRefusal = async (_request, reply, error) => {
  const next = { href: '/', text: 'Go to the htmldrop home page' };
  const message = `${error.message} Connect again from your application.`;
  return refusePage(reply, error, refusedFormPage(message, next, error.status >= 500), PAGE);
};

export interface OAuthApprovalDeps {
  readonly config: Config;
  readonly accounts: AccountDeps;
  readonly identity: IdentityProvider;
  readonly sessions: WebSessions;
  readonly oauth: OAuthDeps;
  readonly signer: Signer;
}

export async function oauthApprovalRoutes(app: TypedApp, { config, ...deps }: OAuthApprovalDeps): Promise<void> {
  const a: ApprovalContext = { ...deps, baseUrl: config.baseUrl };
  app.register(async (approval) => {
    acceptFormPosts(approval, { bodyLimit: SMALL_FORM_BYTES, refuse: refuseForm });
    const hide = { schema: { hide: true } };
    approval.get(OAUTH_APPROVAL_PATH, hide, approvalPage(a));
    approval.get(`${OAUTH_APPROVAL_PATH}/login`, hide, loginRedirect(a));
    approval.post(`${OAUTH_APPROVAL_PATH}/decide`, hide, decide(a));
    approval.post(`${OAUTH_APPROVAL_PATH}/logout`, hide, logout(a));
  });
}
