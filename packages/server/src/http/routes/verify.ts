/**
 * /verify: where the human signs in through the identity provider and approves or denies an agent's request.
 * Approval only by POST, with a CSRF token bound to the session and an exact Origin check; a GET never approves.
 * Sessions are signed cookies (HttpOnly, SameSite=Strict, Secure on https); the pages cannot be framed.
 */

import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ensureAccount } from '../../domain/accounts.js';
import { clientGroup } from '../../domain/client-address.js';
import { decideDeviceFlow, formatUserCode, lookupUserCode, normalizeUserCode } from '../../domain/device-flow.js';
import { hitWindow } from '../../domain/rate-counter.js';
import type { Account, DeviceRequest } from '../../domain/types.js';
import { SignInError } from '../../identity/provider.js';
import type { RouteContext, TypedApp } from '../app.js';
import { acceptFormPosts, formField } from '../forms.js';
import {
  confirmPage,
  continuePage,
  enterCodePage,
  localSignInPage,
  type Outcome,
  outcomePage,
  type RequestSummary,
  signInPage,
} from '../pages/verify.js';
import { cookieValue, serializeCookie } from '../signed-cookie.js';

const SESSION_COOKIE = 'hd_session';
const SIGNIN_COOKIE = 'hd_signin';
const SESSION_TTL_MS = 60 * 60_000;
const SIGNIN_TTL_MS = 10 * 60_000;
/** Wrong codes per client address per window before /verify answers 429. */
const GUESSES = { limit: 20, windowMs: 15 * 60_000 } as const;

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

interface Session {
  readonly a: string;
  readonly l: string;
  readonly p: string;
}

interface SignIn {
  readonly s: string;
  readonly v: string;
  readonly c: string;
}

export function registerVerifyRoutes(app: TypedApp, ctx: RouteContext): void {
  const { config, clock, store, signer, identity } = ctx;
  const secure = config.baseUrl.startsWith('https:');
  const origin = new URL(config.baseUrl).origin;
  const redirectUri = `${config.baseUrl}/verify/callback`;

  function page(reply: FastifyReply, status: number, html: string): FastifyReply {
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

  function outcome(reply: FastifyReply, status: number, kind: Outcome, detail?: string): FastifyReply {
    return page(reply, status, outcomePage(kind, detail));
  }

  const session = (request: FastifyRequest) =>
    signer.verify<Session>('session', cookieValue(request.headers.cookie, SESSION_COOKIE));

  const csrfFor = (request: FastifyRequest) =>
    signer.mac('csrf', cookieValue(request.headers.cookie, SESSION_COOKIE) ?? '');

  const summaryOf = (request: DeviceRequest): RequestSummary => ({
    code: formatUserCode(request.userCode),
    label: request.label,
    requestedAt: request.createdAt,
    now: clock.now(),
  });

  /** Looks a typed code up, counting unknown codes against the client's guess budget. */
  async function find(request: FastifyRequest, input: string) {
    const { key, retryAfterSeconds } = await hitWindow(
      ctx.counter,
      `guess:${clientGroup(request.ip)}`,
      GUESSES.limit,
      GUESSES.windowMs,
      clock.now(),
    );
    if (retryAfterSeconds !== undefined) return { kind: 'rate_limited' as const, retryAfterSeconds };
    const found = await lookupUserCode(ctx.device, input);
    if (found.kind !== 'invalid') await ctx.counter.releaseRateWindow(key);
    return found;
  }

  /** POSTs must come from our own pages: exact Origin, a live session and its CSRF token. */
  function checkPost(request: FastifyRequest): Session | undefined {
    if (request.headers.origin !== origin) return undefined;
    const current = session(request);
    if (current === undefined) return undefined;
    // Checked under every key, so a page rendered before a key rotation still posts.
    const sessionValue = cookieValue(request.headers.cookie, SESSION_COOKIE) ?? '';
    return signer.matches('csrf', sessionValue, formField(request.body, 'csrf')) ? current : undefined;
  }

  app.register(async (verify) => {
    acceptFormPosts(verify);

    verify.get('/verify', { schema: { hide: true } }, async (request, reply) => {
      const input = (request.query as Record<string, unknown>).code;
      if (typeof input !== 'string' || input.trim() === '') return page(reply, 200, enterCodePage(null));
      const found = await find(request, input);
      if (found.kind === 'rate_limited') {
        reply.header('retry-after', String(found.retryAfterSeconds));
        return outcome(reply, 429, 'rate_limited');
      }
      if (found.kind === 'invalid')
        return page(reply, 404, enterCodePage('No request has this code. Check it and try again.'));
      if (found.kind === 'expired') return outcome(reply, 410, 'expired');
      if (found.kind === 'done') return outcome(reply, 409, 'done');
      const current = session(request);
      if (current === undefined) {
        const login = `/verify/login?code=${encodeURIComponent(formatUserCode(found.request.userCode))}`;
        return page(reply, 200, signInPage(summaryOf(found.request), identity.displayName, login));
      }
      return page(
        reply,
        200,
        confirmPage(summaryOf(found.request), { login: current.l, provider: current.p }, csrfFor(request)),
      );
    });

    verify.get('/verify/login', { schema: { hide: true } }, async (request, reply) => {
      const input = (request.query as Record<string, unknown>).code;
      const code = typeof input === 'string' ? normalizeUserCode(input) : undefined;
      if (code === undefined) return page(reply, 400, enterCodePage('That is not a valid code.'));
      const state = randomBytes(24).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      let target: string;
      try {
        target = await identity.authorizationUrl({ state, codeVerifier: verifier, redirectUri });
      } catch (error) {
        request.log.warn({ err: error }, 'sign-in could not start');
        return outcome(reply, 502, 'error', error instanceof SignInError ? error.message : undefined);
      }
      const value = signer.sign<SignIn>('signin', { s: state, v: verifier, c: code }, SIGNIN_TTL_MS);
      // Lax: it must come back on the provider's cross-site redirect to /verify/callback.
      reply.header(
        'set-cookie',
        serializeCookie(SIGNIN_COOKIE, value, {
          path: '/verify',
          maxAgeSeconds: SIGNIN_TTL_MS / 1000,
          sameSite: 'Lax',
          secure,
        }),
      );
      return reply.header('cache-control', 'no-store').redirect(target, 303);
    });

    verify.get('/verify/local', { schema: { hide: true } }, async (request, reply) => {
      const pending = signer.verify<SignIn>('signin', cookieValue(request.headers.cookie, SIGNIN_COOKIE));
      const state = (request.query as Record<string, unknown>).state;
      if (identity.name !== 'local' || pending === undefined || pending.s !== state) {
        return outcome(reply, 400, 'error', 'This sign-in expired. Open the link from your agent again.');
      }
      return page(reply, 200, localSignInPage(pending.s, formatUserCode(pending.c), null));
    });

    const callback = async (request: FastifyRequest, reply: FastifyReply) => {
      const pending = signer.verify<SignIn>('signin', cookieValue(request.headers.cookie, SIGNIN_COOKIE));
      if (pending === undefined)
        return outcome(reply, 400, 'error', 'This sign-in expired. Open the link from your agent again.');
      const params = { state: pending.s, codeVerifier: pending.v, redirectUri };
      const form = request.method === 'POST' ? (request.body as Record<string, string>) : undefined;
      if (form !== undefined && request.headers.origin !== origin)
        return outcome(reply, 403, 'error', 'Cross-site sign-in refused.');
      let account: Account;
      try {
        const callbackUrl = new URL(request.url, config.baseUrl);
        const who = await identity.complete(callbackUrl, form, params);
        account = await ensureAccount(store, clock, who);
      } catch (error) {
        if (error instanceof SignInError && identity.name === 'local') {
          return page(reply, 400, localSignInPage(pending.s, formatUserCode(pending.c), error.message));
        }
        request.log.warn({ err: error }, 'sign-in failed');
        return outcome(reply, 400, 'error', error instanceof SignInError ? error.message : undefined);
      }
      const value = signer.sign<Session>(
        'session',
        { a: account.id, l: account.login, p: account.provider },
        SESSION_TTL_MS,
      );
      reply.header('set-cookie', [
        serializeCookie(SESSION_COOKIE, value, {
          path: '/verify',
          maxAgeSeconds: SESSION_TTL_MS / 1000,
          sameSite: 'Strict',
          secure,
        }),
        serializeCookie(SIGNIN_COOKIE, '', { path: '/verify', maxAgeSeconds: 0, sameSite: 'Lax', secure }),
      ]);
      // A page that navigates on, rather than a redirect: after the provider's cross-site redirect, a same-site
      // navigation is needed for the SameSite=Strict session cookie to be sent.
      return page(reply, 200, continuePage(`/verify?code=${encodeURIComponent(formatUserCode(pending.c))}`));
    };
    verify.get('/verify/callback', { schema: { hide: true } }, callback);
    verify.post('/verify/callback', { schema: { hide: true } }, callback);

    verify.post('/verify/decide', { schema: { hide: true } }, async (request, reply) => {
      const current = checkPost(request);
      if (current === undefined) {
        return outcome(
          reply,
          403,
          'error',
          'This approval did not come from your signed-in verification page. Open the link again.',
        );
      }
      const code = normalizeUserCode(formField(request.body, 'code'));
      if (code === undefined) return page(reply, 400, enterCodePage('That is not a valid code.'));
      const decision = formField(request.body, 'decision');
      if (decision !== 'approve' && decision !== 'deny') return outcome(reply, 400, 'error', 'Choose Approve or Deny.');
      const changed = await decideDeviceFlow(
        ctx.device,
        code,
        decision === 'approve' ? { approve: current.a } : 'deny',
      );
      if (changed) return outcome(reply, 200, decision === 'approve' ? 'approved' : 'denied');
      // Not pending: say why, counting unknown codes against the same guess budget as the code form.
      const found = await find(request, code);
      if (found.kind === 'rate_limited') {
        reply.header('retry-after', String(found.retryAfterSeconds));
        return outcome(reply, 429, 'rate_limited');
      }
      return outcome(
        reply,
        found.kind === 'expired' ? 410 : 409,
        found.kind === 'expired' ? 'expired' : found.kind === 'invalid' ? 'invalid' : 'done',
      );
    });

    verify.post('/verify/logout', { schema: { hide: true } }, async (request, reply) => {
      if (checkPost(request) === undefined) return outcome(reply, 403, 'error', 'Sign-out refused.');
      reply.header(
        'set-cookie',
        serializeCookie(SESSION_COOKIE, '', { path: '/verify', maxAgeSeconds: 0, sameSite: 'Strict', secure }),
      );
      return page(reply, 200, enterCodePage(null));
    });
  });
}
