/**
 * What every console route shares (docs/console.md): who is signed in, the page and refusal writers, and the two
 * shapes of a console handler. `page()` is a GET that changes nothing: signed out, it shows the sign-in page; an
 * unknown or foreign drop is the same 404 page. `action()` is a POST: the exact Origin, the session and its
 * CSRF token are checked before anything else (403 `cross_site`, nothing done); a write counts toward the account's
 * write limits as the API's writes do (write-budget.ts); success goes back with 303, a refusal shows the page again with the
 * readable message and the catalogue's status.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Config } from '../../config.js';
import type { AccessLogDeps } from '../../domain/access-log.js';
import type { AccountDeps } from '../../domain/accounts.js';
import type { CommentDeps } from '../../domain/comments.js';
import type { DropDeps } from '../../domain/drops.js';
import type { ExportDeps } from '../../domain/export.js';
import type { RecipientLinkDeps } from '../../domain/recipient-links.js';
import type { StatsDeps } from '../../domain/stats.js';
import type { WebhookDeps } from '../../domain/webhooks.js';
import { type ApiError, isApiError } from '../../errors.js';
import type { IdentityProvider } from '../../identity/index.js';
import type { Previews } from '../../serve/previews.js';
import { type FormRefusal, formErrorHandler, formField } from '../forms.js';
import { refusePage, servicePage, showPage } from '../page-reply.js';
import { signedOutPage, type Who } from '../pages/console.js';
import { consoleShell, notice } from '../pages/console-layout.js';
import type { Schemas } from '../schemas.js';
import { type SessionPayload, WEB_SESSION, type WebSessions } from '../web-session.js';

/** What the console uses: the drops and accounts domains, the provider and the web sessions. */
export interface ConsoleRouteDeps {
  readonly config: Config;
  readonly schemas: Schemas;
  readonly drops: DropDeps;
  readonly comments: CommentDeps;
  readonly stats: StatsDeps;
  readonly accounts: AccountDeps;
  readonly identity: IdentityProvider;
  readonly sessions: WebSessions;
  /** "Download everything" (docs/console.md): the export of docs/api.md, "Export and import". */
  readonly exports: ExportDeps;
  /** Webhook endpoints (domain/webhooks.ts), for the Webhooks page. */
  readonly webhooks: WebhookDeps;
  /** The drops' thumbnails (docs/console.md): their preview images, as their owner sees them. */
  readonly previews: Previews;
  /** Recipient links and the access log, for the drop page's Sharing panel (docs/console.md, "Sharing"). */
  readonly links: RecipientLinkDeps;
  readonly accessLog: AccessLogDeps;
}

/** A signed-in request: who, the nonce of its page, and the CSRF token its forms carry. */
export interface Visit {
  readonly session: SessionPayload;
  readonly who: Who;
  readonly nonce: string;
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

export interface ActionOptions {
  /** Whether it counts toward the write limits (what an API write would: drop changes, not token revocation). */
  readonly write: boolean;
  /** Does it; answers where to go back to, or (`page`) a page to show at once (a secret shown only once). */
  run(session: SessionPayload, request: FastifyRequest, v: Visit): Promise<string | { readonly page: string }>;
  /** The page to show again, with the refusal's message. */
  refused(v: Visit, request: FastifyRequest, message: string): Promise<string>;
}

export interface ConsoleKit {
  page(render: (v: Visit, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>): Handler;
  /**
   * A POST's handler. A form refused before the handler ran (not readable, not a form, over CONSOLE_FORM_BYTES)
   * shows the action's page again, as a refusal by the handler does (the error handler that `errorPages` gives the
   * action's route).
   */
  action(options: ActionOptions): Handler;
  show(reply: FastifyReply, v: Visit, html: string): FastifyReply;
  refuse(reply: FastifyReply, v: Visit, error: ApiError, html: string): FastifyReply;
  /** The room's page for anything else that fails (the sign-out form, a page that could not be built). */
  readonly failed: FormRefusal;
  /**
   * `onRequest` of every console POST: the exact Origin and a live session before the body is read, so only a
   * signed-in owner's form is read at all (up to CONSOLE_FORM_BYTES); the CSRF token is checked with the form.
   */
  checkSender(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** An `onRoute` hook: each action's route gets the error handler that shows the action's page again. */
  errorPages(route: RouteOptions): void;
}

/**
 * The cap on a console form: far above what its fields take (a description of 500 characters, ten tags), so that
 * a pasted text too long for a field is read and refused with that field's limit, the form shown as typed.
 */
export const CONSOLE_FORM_BYTES = 1_048_576;

/** What a finished action says on the page it goes back to (a fixed table: nothing from the URL is echoed). */
export const DONE: Readonly<Record<string, string>> = {
  saved: 'Details saved.',
  locked: 'Passcode set: viewers must now enter it.',
  unlocked: 'Passcode removed: anyone with the link can view the drop.',
  restored: 'Restored: the new latest version has the content of the version you chose.',
  'version-deleted': 'Version deleted.',
  deleted: 'The drop was deleted.',
  revoked: 'Token revoked: whatever used it can no longer publish.',
  'comment-resolved': 'Comment marked resolved.',
  'comment-deleted': 'Comment deleted.',
  'comments-deleted': 'The comments you ticked were deleted.',
  'guest-comments-deleted': 'Every guest comment of this drop was deleted.',
  'comments-signed_in': 'Only people signed in can comment on this drop now.',
  'comments-open': 'Anyone who can view this drop can comment now.',
  'comments-off': 'Comments are off: only you can comment on this drop now.',
  'expiry-set': 'Expiry set: the link stops working at the time shown.',
  'expiry-cleared': 'Expiry removed: the drop stays until you delete it.',
  'webhook-removed': 'Webhook removed: it gets nothing more.',
  'webhook-test': 'Test event queued: it is delivered within seconds; see the last delivery below.',
  sharing: 'Saved: who can see the drop has changed, on every path to it.',
  'link-revoked': 'Link revoked: it no longer opens the drop.',
};

/** The `done` message a page was sent back with, if any. */
export function doneOf(request: FastifyRequest): { done?: string } {
  const key = (request.query as Record<string, unknown>).done;
  const done = typeof key === 'string' && Object.hasOwn(DONE, key) ? DONE[key] : undefined;
  return done === undefined ? {} : { done };
}

/** A refusal as the owner reads it; a 429 says when to retry. */
export function refusalText(error: ApiError): string {
  const retry = error.retryAfterSeconds === undefined ? '' : ` Try again in ${error.retryAfterSeconds} s.`;
  return `${error.message}${retry}`;
}

const newNonce = () => randomBytes(16).toString('base64');
const hidden = (error: unknown) => isApiError(error) && (error.code === 'not_found' || error.code === 'forbidden');

/** A console page outside a signed-in visit, or one that could not be built: the refusal and a way back. */
function bareRefusal(reply: FastifyReply, message: string, refusal: ApiError | 'cross_site' = 'cross_site') {
  const nonce = newNonce();
  const failed = typeof refusal !== 'string' && refusal.status >= 500;
  const title = failed ? 'Something went wrong' : 'Refused';
  const body = `<h1>${title}</h1>${notice('err', message)}<p><a href="/console">Open the console</a></p>`;
  return refusePage(reply, refusal, consoleShell({ title, nonce, body }), servicePage(nonce));
}

export function createConsoleKit(deps: ConsoleRouteDeps): ConsoleKit {
  const { sessions } = deps;
  /** Each action's handler and the error handler of its route (onRoute sees the handler as it was given). */
  const actionPages = new WeakMap<Handler, ReturnType<typeof formErrorHandler>>();
  const visit = (request: FastifyRequest): Visit | undefined => {
    const session = sessions.read<SessionPayload>(request, WEB_SESSION);
    if (session === undefined) return undefined;
    const who = { login: session.login, provider: session.provider, csrf: sessions.csrf(request, WEB_SESSION) };
    return { session, who, nonce: newNonce() };
  };
  const notFound = (reply: FastifyReply, v: Visit) => {
    const body = `<h1>Drop not found</h1>${notice('err', 'No drop of yours has this address. It may have been deleted.')}<p><a href="/console">Back to your drops</a></p>`;
    const html = consoleShell({ title: 'Not found', nonce: v.nonce, who: v.who, current: 'drops', body });
    return refusePage(reply, 'not_found', html, servicePage(v.nonce));
  };
  const signedOut = (request: FastifyRequest, reply: FastifyReply) => {
    const nonce = newNonce();
    const loginHref = `/console/login?next=${encodeURIComponent(request.url)}`;
    const html = signedOutPage({ providerName: deps.identity.displayName, loginHref, nonce });
    return showPage(reply, html, servicePage(nonce));
  };
  const kit: ConsoleKit = {
    show: (reply, v, html) => showPage(reply, html, servicePage(v.nonce)),
    refuse: (reply, v, error, html) => refusePage(reply, error, html, servicePage(v.nonce)),
    page: (render) => async (request, reply) => {
      const v = visit(request);
      if (v === undefined) return signedOut(request, reply);
      try {
        return await render(v, request, reply);
      } catch (error) {
        if (hidden(error)) return notFound(reply, v);
        throw error;
      }
    },
    action: (options) => {
      /** The action's page again with the refusal: a foreign drop is the 404 page; a failure, the bare page. */
      const refused: FormRefusal = async (request, reply, error) => {
        const v = visit(request);
        if (v === undefined || error.status >= 500) return bareRefusal(reply, refusalText(error), error);
        if (hidden(error)) return notFound(reply, v);
        return kit.refuse(reply, v, error, await options.refused(v, request, refusalText(error)));
      };
      const handler: Handler = async (request, reply) => {
        const session = sessions.checkPost(request, WEB_SESSION);
        if (session === undefined) return bareRefusal(reply, FOREIGN_FORM);
        try {
          if (options.write) await request.spendWrite(session.accountId);
          const v = visit(request);
          if (v === undefined) return bareRefusal(reply, FOREIGN_FORM);
          const next = await options.run(session, request, v);
          if (typeof next !== 'string') return kit.show(reply, v, next.page);
          return reply.header('cache-control', 'no-store').redirect(next, 303);
        } catch (error) {
          if (!isApiError(error)) throw error;
          return refused(request, reply, error);
        }
      };
      actionPages.set(handler, formErrorHandler(CONSOLE_FORM_BYTES, refused));
      return handler;
    },
    failed: async (request, reply, error) => {
      const v = visit(request);
      if (v === undefined || error.status >= 500) return bareRefusal(reply, refusalText(error), error);
      const body = `<h1>Not done</h1>${notice('err', refusalText(error))}<p><a href="/console">Back to your drops</a></p>`;
      const html = consoleShell({ title: 'Not done', nonce: v.nonce, who: v.who, body });
      return kit.refuse(reply, v, error, html);
    },
    errorPages(route) {
      const errorHandler = actionPages.get(route.handler as Handler);
      if (errorHandler !== undefined) route.errorHandler = errorHandler;
    },
    async checkSender(request, reply) {
      if (request.method !== 'POST') return undefined;
      const live = request.headers.origin === sessions.origin && sessions.read(request, WEB_SESSION) !== undefined;
      return live ? undefined : bareRefusal(reply, FOREIGN_FORM);
    },
  };
  return kit;
}

const FOREIGN_FORM = 'This form did not come from your console, or your session ended. Try again.';

/** POST /console/logout: ends the session on every page (Origin and CSRF checked like every console POST). */
export function logout(sessions: WebSessions): Handler {
  return async (request, reply) => {
    if (sessions.checkPost(request, WEB_SESSION) === undefined) {
      return bareRefusal(reply, 'Sign-out must come from your console.');
    }
    reply.header('set-cookie', sessions.signOut());
    // The page of a drop the person was not allowed to see signs out back to that drop (its sign-in page), never
    // to another site: only a viewer path (docs/api.md, "Who can see a drop").
    const next = formField(request.body, 'next');
    const back = /^\/p\/[A-Za-z0-9_-]{1,64}(?:\?v=\d{1,9})?$/.test(next) ? next : '/console';
    return reply.header('cache-control', 'no-store').redirect(back, 303);
  };
}
