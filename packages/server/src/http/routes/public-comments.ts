/**
 * Comments from the viewer (docs/api.md, "Comments"): the panel's model for `/p/<slug>`, and `POST /p/<slug>/comments`.
 * Who may comment follows the drop's setting (domain/comments.ts); the signed-in human is the service's session
 * (`hd_web`, web-session.ts). A post is refused before anything else when it comes from another site or from a drop's own
 * sandboxed document (Fetch Metadata, as for the passcode gate), or, signed in, without the session's CSRF token.
 * A locked drop takes comments only from a visitor holding its capability, or from its owner.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as comments from '../../domain/comments.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { decideAccess, type PublicViewDeps } from '../../domain/public-view.js';
import type { DropRecord } from '../../domain/types.js';
import { type ApiError, isApiError } from '../../errors.js';
import type { IdentityProvider } from '../../identity/index.js';
import { acceptFormPosts, type FormRefusal, formField, isForeignFormPost } from '../forms.js';
import { refusePage } from '../page-reply.js';
import { escapeHtml, simplePage } from '../pages/layout.js';
import type { ViewerComments } from '../pages/viewer.js';
import type { TypedApp } from '../typed-app.js';
import { type SessionPayload, WEB_SESSION, type WebSessions } from '../web-session.js';
import { accessOf, linkOf, personOf } from './public.js';

export interface ViewerCommentDeps {
  readonly comments: comments.CommentDeps;
  readonly sessions: WebSessions;
  readonly identity: IdentityProvider;
  readonly view: PublicViewDeps;
}

const viewerPath = (slug: string, version: number | undefined) =>
  `/p/${encodeURIComponent(slug)}${version === undefined ? '' : `?v=${version}`}`;

/** The viewer's page of comments older than a time: `/p/<slug>?[v=<n>&]comments_before=<ms>#comments`. */
const olderPath = (slug: string, version: number | undefined, before: number) =>
  `${viewerPath(slug, version)}${version === undefined ? '?' : '&'}comments_before=${before}#comments`;

/** The `comments_before` of a viewer URL: a page of older comments; anything but a time shows the newest page. */
export function commentsBefore(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

/** The comments panel of the version shown to this visitor; undefined when comments are off and none exist. */
export async function viewerComments(
  deps: ViewerCommentDeps,
  request: FastifyRequest,
  drop: DropRecord,
  version: number,
  requested: number | undefined,
  before?: number,
): Promise<ViewerComments | undefined> {
  const found = await comments.commentsOfVersion(deps.comments, drop.slug, version, before);
  const session = deps.sessions.read<SessionPayload>(request, WEB_SESSION);
  const owner = session !== undefined && session.accountId === drop.accountId;
  const none = found.made.total + found.resolvedHere.total === 0;
  if (drop.comments === 'off' && none && !owner) return undefined;
  const back = `${viewerPath(drop.slug, requested)}#comments`;
  let can: ViewerComments['can'];
  if (drop.comments === 'off' && !owner) can = { kind: 'off' };
  else if (session !== undefined) {
    can = { kind: 'account', login: session.login, csrf: deps.sessions.csrf(request, WEB_SESSION) };
  } else if (drop.comments === 'open') can = { kind: 'guest' };
  else {
    const href = `/console/login?next=${encodeURIComponent(back)}`;
    can = { kind: 'sign_in', href, provider: deps.identity.displayName };
  }
  return {
    // Pages come newest first; the panel reads oldest first, its form below the newest.
    list: [...found.made.comments].reverse(),
    total: found.made.total,
    ...(found.olderBefore === undefined ? {} : { olderHref: olderPath(drop.slug, requested, found.olderBefore) }),
    ...(before === undefined ? {} : { newestHref: back }),
    resolvedHere: [...found.resolvedHere.comments].reverse(),
    resolvedHereTotal: found.resolvedHere.total,
    can,
    action: `/p/${encodeURIComponent(drop.slug)}/comments${requested === undefined ? '' : `?v=${requested}`}`,
  };
}

/** A refusal as a small page with a way back to the drop. */
const REFUSALS = {
  cross_site: 'For your safety, comments are only accepted from the drop’s own page. Post it there.',
  not_found: 'This drop does not exist, or it was deleted.',
  locked: 'This drop is locked: open it and enter its passcode before commenting.',
  sign_in_required: 'This drop is shared with specific people: open it and sign in first.',
  not_on_list: 'You are not among the people this drop is shared with.',
} as const;

function refuse(reply: FastifyReply, error: ApiError | keyof typeof REFUSALS, back: string) {
  const message =
    typeof error === 'string'
      ? REFUSALS[error]
      : `${error.message}${error.retryAfterSeconds === undefined ? '' : ` Try again in ${error.retryAfterSeconds} s.`}`;
  const page = simplePage(
    'Comment not posted',
    `<p id="comment-refused">${escapeHtml(message)}</p><p><a href="${escapeHtml(back)}">Back to the drop</a></p>`,
  );
  return refusePage(reply, error, page, { referrerPolicy: 'same-origin' });
}

/** Who is posting: the signed-in account, or a guest with the typed name. */
function commenter(request: FastifyRequest, session: SessionPayload | undefined): comments.Commenter {
  if (session !== undefined) return { kind: 'account', accountId: session.accountId, login: session.login };
  return { kind: 'guest', name: formField(request.body, 'name'), address: request.ip };
}

/**
 * The cap on a comment form: every field at its longest with each character percent-encoded (at most 12 bytes:
 * four UTF-8 bytes as `%XX`), so a comment in any script fits.
 */
const COMMENT_FORM_BYTES = 65_536;

/** The comment form refused before its handler ran (not readable, not a form, too large): the refusal page. */
const refuseForm: FormRefusal = async (request, reply, error) => {
  const { slug } = request.params as { slug: string };
  const requested = parseVersionNumber((request.query as { v?: unknown }).v);
  return refuse(reply, error, isValidSlug(slug) ? `${viewerPath(slug, requested)}#comments` : '/');
};

/** POST /p/<slug>/comments[?v=<n>]: a comment from the viewer's panel, then back to the panel (303). */
export function registerViewerCommentPost(app: TypedApp, deps: ViewerCommentDeps, ownOrigin: string): void {
  app.register(async (scope) => {
    acceptFormPosts(scope, { bodyLimit: COMMENT_FORM_BYTES, refuse: refuseForm });
    scope.post('/p/:slug/comments', { schema: { hide: true } }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const raw = (request.query as { v?: unknown }).v;
      const requested = raw === undefined ? undefined : parseVersionNumber(raw);
      const back = `${viewerPath(slug, requested)}#comments`;
      if (!isValidSlug(slug) || (raw !== undefined && requested === undefined)) {
        return refuse(reply, 'not_found', '/');
      }
      const session = deps.sessions.read<SessionPayload>(request, WEB_SESSION);
      const csrfOk =
        session === undefined || deps.sessions.csrfMatches(request, WEB_SESSION, formField(request.body, 'csrf'));
      if (isForeignFormPost(request.headers, ownOrigin) || !csrfOk) return refuse(reply, 'cross_site', back);
      const drop = await comments.findCommentedDrop(deps.comments, slug);
      if (drop === undefined) return refuse(reply, 'not_found', '/');
      const owner = session?.accountId === drop.accountId;
      // The one access decision (domain/public-view.ts): who can see the drop, then its passcode (its owner, signed
      // in, comments on a locked drop without one).
      const access = { ...accessOf(request), person: personOf(deps.sessions, request), link: linkOf(request) };
      const decision = await decideAccess(deps.view, drop, access, requested ?? null);
      if (decision.kind === 'refused') {
        return refuse(reply, session === undefined ? 'sign_in_required' : 'not_on_list', back);
      }
      if (decision.kind === 'locked' && !owner) return refuse(reply, 'locked', back);
      try {
        if (session !== undefined) await request.spendWrite(session.accountId);
        const input = {
          body: formField(request.body, 'body'),
          quote: formField(request.body, 'quote'),
          version: requested,
        };
        await comments.addViewerComment(deps.comments, drop, commenter(request, session), input);
      } catch (error) {
        if (!isApiError(error)) throw error;
        return refuse(reply, error, back);
      }
      return reply.header('cache-control', 'no-store').redirect(back, 303);
    });
  });
}
