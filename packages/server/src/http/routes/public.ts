/**
 * Public serving under /p/ (spec 4.6; docs/api.md 4.6): the viewer, the passcode gate and the raw
 * document, and the readable copy for agents (docs/api.md, "Readable copy (Markdown)"). No API token needed; error
 * answers are small HTML pages (Markdown for the readable copy), never JSON. Untrusted HTML only ever runs in
 * a sandbox (iframe sandbox attribute and a sandbox CSP on the raw response), never with this origin's privileges.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Capabilities } from '../../domain/capability.js';
import type { ContentHosts } from '../../domain/content-origin.js';
import { folderTarget } from '../../domain/files.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import {
  type AccessDecision,
  findViewerPage,
  type PublicViewDeps,
  recordView,
  refuseWrongPasscode,
  type VisitorAccess,
} from '../../domain/public-view.js';
import {
  CONTEXT_HEADING,
  findReadableCopy,
  readableCopyHead,
  readableDocument,
  readableVersionKey,
} from '../../domain/readable-copy.js';
import { isLinkSecret, LINK_PARAM } from '../../domain/recipient-links.js';
import type { DropRecord } from '../../domain/types.js';
import { countRender, type RenderCountDeps, type UnlockDeps, unlockDrop } from '../../domain/viewing.js';
import type { Person } from '../../domain/visibility.js';
import { ERROR_STATUS, type ErrorCode } from '../../errors.js';
import type { MarkdownCopies } from '../../serve/markdown-copy.js';
import { CACHE_PRIVATE } from '../../serve/raw.js';
import { type RawVerdict, rawVerdict, sendRawDocument } from '../../serve/raw-answer.js';
import { isGated } from '../../serve/raw-cache.js';
import type { FileLoader, RawLoader } from '../../serve/raw-loader.js';
import { acceptQuality } from '../accept.js';
import { cookieValue, serializeCookie } from '../cookies.js';
import { acceptFormPosts, type FormRefusal, formField, isForeignFormPost, SMALL_FORM_BYTES } from '../forms.js';
import { type PageOptions, refusePage, showPage } from '../page-reply.js';
import {
  EXPIRED_PAGE,
  failedPage,
  NOT_FOUND_PAGE,
  passcodeRequiredPage,
  versionNotFoundPage,
} from '../pages/layout.js';
import {
  type LinkCard,
  renderAccessRefused,
  renderEmbed,
  renderGate,
  renderProtectedEmbed,
  renderViewer,
} from '../pages/viewer.js';
import type { TypedApp } from '../typed-app.js';
import { type SessionPayload, WEB_SESSION, type WebSessions } from '../web-session.js';
import {
  commentsBefore,
  registerViewerCommentPost,
  type ViewerCommentDeps,
  viewerComments,
} from './public-comments.js';

export const CAPABILITY_COOKIE = 'hd_cap';
export const CAPABILITY_PARAM = 'cap';
/** The recipient link a browser opened a drop with (docs/api.md, "Who can see a drop"), kept for the drop's paths. */
export const LINK_COOKIE = 'hd_link';

/** A page that depends on the visitor's capability: never kept by a shared cache. */
const PRIVATE: PageOptions = { cacheControl: CACHE_PRIVATE };

/** Parses `?v=<n>`: undefined when absent, null when it names no possible version. */
function requestedVersion(v: unknown): number | undefined | null {
  return v === undefined ? undefined : (parseVersionNumber(v) ?? null);
}

/**
 * The viewer's own CSP: inline styles, nonce'd scripts, frames only from this origin, no external requests; and who
 * may frame the viewer itself (`frameAncestors`: the service, plus the configured embed origins).
 */
function viewerCsp(nonce: string, frameAncestors: string, frameSource: string): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src 'nonce-${nonce}'`,
    `frame-src ${frameSource}`,
    "img-src 'self' data:",
    // The live events stream and the refresh of the page's parts (docs/api.md, "Live pages").
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

/** The `frame-ancestors` sources for the configured embed origins (docs/api.md 4.6). */
function frameAncestorsOf(embedOrigins: readonly string[]): string {
  return embedOrigins.includes('*') ? '*' : ["'self'", ...embedOrigins].join(' ');
}

interface Params {
  readonly slug: string;
}
type Query = Record<string, string | string[] | undefined>;

/** The drop and version a /p/ URL names; undefined (a 404 page) for a bad slug or `?v=`. */
function publicTarget(request: FastifyRequest): { slug: string; version: number | undefined } | undefined {
  const { slug } = request.params as Params;
  const version = requestedVersion((request.query as Query).v);
  return isValidSlug(slug) && version !== null ? { slug, version } : undefined;
}

/** What the visitor presents: the capability (iframe token, else cookie) and any Authorization header. */
export function accessOf(request: FastifyRequest): VisitorAccess {
  const fromQuery = (request.query as Query)[CAPABILITY_PARAM];
  return {
    capability: typeof fromQuery === 'string' ? fromQuery : cookieValue(request.headers.cookie, CAPABILITY_COOKIE),
    authorization: request.headers.authorization,
  };
}

/** The person signed in to the service's pages (the one session, web-session.ts), as the access decision takes it. */
export function personOf(sessions: WebSessions, request: FastifyRequest): Person | undefined {
  const session = sessions.read<SessionPayload>(request, WEB_SESSION);
  return session === undefined
    ? undefined
    : { accountId: session.accountId, login: session.login, email: session.email };
}

const sessionsOf = (routes: Pick<PublicRouteDeps, 'viewerComments'>) => routes.viewerComments.sessions;

/** A recipient link's secret: `?k=` in the URL, else the cookie the viewer set when the link opened the drop. */
export function linkOf(request: FastifyRequest): string | undefined {
  const fromQuery = (request.query as Query)[LINK_PARAM];
  if (typeof fromQuery === 'string') return fromQuery;
  return cookieValue(request.headers.cookie, LINK_COOKIE);
}

/**
 * What a visitor of a page under /p/<slug> other than the viewer presents (the events stream, the preview image, the
 * embed): the capability cookie, the person signed in and a recipient link, so each is decided as the viewer is
 * (docs/api.md, "Who can see a drop").
 */
export function pageVisitorOf(sessions: WebSessions, request: FastifyRequest): VisitorAccess {
  return {
    capability: cookieValue(request.headers.cookie, CAPABILITY_COOKIE),
    authorization: undefined,
    person: personOf(sessions, request),
    link: linkOf(request),
  };
}

/** What a visitor on the service's own host presents: the grants of accessOf(), the session and a link. */
function visitorOf(routes: PublicRoutes, request: FastifyRequest, base: VisitorAccess): VisitorAccess {
  return { ...base, person: personOf(routes.viewerComments.sessions, request), link: linkOf(request) };
}

/**
 * The page of a visitor refused by decideAccess() (docs/api.md, "Who can see a drop"): 401 with a sign-in that comes
 * back to `back` (the drop and version asked for), or 403 naming the signed-in person, with a way to sign out.
 * Nothing of the drop; never kept by any cache.
 */
function refuseAccess(
  routes: PublicRoutes,
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: Extract<AccessDecision, { kind: 'refused' }>,
  back: string,
) {
  const { sessions, identity } = routes.viewerComments;
  const person = personOf(sessions, request);
  const link =
    refusal.reason === 'link_revoked' ? 'revoked' : refusal.reason === 'link_expired' ? 'expired' : undefined;
  const nonce = routes.pageNonce(reply);
  const signInHref = `/console/login?next=${encodeURIComponent(back)}`;
  const html = renderAccessRefused({
    kind: person === undefined ? 'sign_in' : 'not_on_list',
    link,
    signInHref,
    provider: identity.displayName,
    signedInAs:
      person === undefined ? undefined : { login: person.login, csrf: sessions.csrf(request, WEB_SESSION), next: back },
    nonce,
  });
  const options = { ...PRIVATE, referrerPolicy: 'same-origin' };
  return refusePage(reply, person === undefined ? 'sign_in_required' : 'not_on_list', html, options);
}

/** The viewer's address for a drop and a version asked for (where a sign-in comes back to). */
const viewerPathOf = (slug: string, version: number | undefined) =>
  `/p/${slug}${version === undefined ? '' : `?v=${version}`}`;

/** What the three public routes share, built once. */
interface PublicRoutes extends PublicRouteDeps {
  readonly frameAncestors: string;
  /**
   * A fresh nonce and the viewer CSP header that allows it. `frameSource`: the drop's own origin when the viewer
   * frames it there; `'self'` (the raw path) otherwise.
   */
  pageNonce(reply: FastifyReply, frameSource?: string): string;
}

/** What the public routes use: who may see what, the raw documents, view counts and the passcode gate. */
export interface PublicRouteDeps {
  readonly config: Config;
  readonly view: PublicViewDeps;
  readonly loadRaw: RawLoader;
  /** A version's files (docs/api.md, "Many files in one drop"). */
  readonly loadFile: FileLoader;
  readonly renders: RenderCountDeps;
  readonly capabilities: Capabilities;
  readonly unlock: UnlockDeps;
  /** The comments panel and its form (public-comments.ts). */
  readonly viewerComments: ViewerCommentDeps;
  /** Each drop's own origin, where the viewer frames it when configured (docs/api.md, "Each drop on its own origin"). */
  readonly contentHosts: ContentHosts | undefined;
  /** Versions as readable text for the readable copy, made in a bounded worker (serve/markdown-copy.ts). */
  readonly readableCopies: MarkdownCopies;
}

export async function publicRoutes(app: TypedApp, deps: PublicRouteDeps): Promise<void> {
  const frameAncestors = frameAncestorsOf(deps.config.embedOrigins);
  const routes: PublicRoutes = {
    ...deps,
    frameAncestors,
    pageNonce(reply, frameSource = "'self'") {
      const nonce = randomBytes(16).toString('base64');
      reply.header('content-security-policy', viewerCsp(nonce, frameAncestors, frameSource));
      return nonce;
    },
  };
  registerRawRoute(app, routes);
  registerRawFolderRoute(app, routes);
  registerViewerRoute(app, routes);
  registerEmbedRoute(app, routes);
  registerReadableCopyRoute(app, routes);
  registerUnlockRoute(app, routes);
  registerViewerCommentPost(app, deps.viewerComments, new URL(deps.config.baseUrl).origin);
}

/** `/p/<slug>/raw[?v=<n>]`: a cache miss, or any spelling the fast path does not take (serve/fast-path.ts). */
function registerRawRoute(app: TypedApp, routes: PublicRoutes): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/raw',
    schema: { hide: true },
    handler: async (request, reply) => {
      const target = publicTarget(request);
      if (target === undefined) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const { slug, version } = target;
      const entry = await routes.loadRaw({ slug }, version);
      if (entry === undefined) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      // Who the visitor is matters only for a gated drop: a public one's answer reads no session (docs/api.md 4.6).
      const access = isGated(entry) ? visitorOf(routes, request, accessOf(request)) : accessOf(request);
      const verdict = await rawVerdict(routes.view, entry, entry.answers, access);
      if (verdict.kind === 'expired') return refusePage(reply, 'expired', EXPIRED_PAGE);
      if (verdict.kind === 'refused') return refuseAccess(routes, request, reply, verdict, viewerPathOf(slug, version));
      if (verdict.kind === 'locked') {
        const viewer = `/p/${slug}${version === undefined ? '' : `?v=${version}`}`;
        return refusePage(reply, 'locked', passcodeRequiredPage(viewer), PRIVATE);
      }
      return sendDocument(request, reply, verdict, { version, surface: 'raw', now: routes.view.clock.now() });
    },
  });
}

/**
 * `/p/<slug>/raw/v/<n>/[<path>]` (docs/api.md, "Many files in one drop"): a version's document and its files
 * without a content origin, under the raw path's sandbox; a locked drop with a capability first in the path
 * (`/p/<slug>/raw/~<capability>/v/<n>/…`, so the document's relative URLs carry it), in `cap`, in the cookie, or the
 * owner's token.
 */
function registerRawFolderRoute(app: TypedApp, routes: PublicRoutes): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/raw/*',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as Params;
      // The path after `/p/<slug>/raw`, as sent (still percent-encoded: folderTarget decodes the file path once).
      const [url = '', search] = request.url.split('?', 2);
      const afterSlug = url.slice(url.indexOf('/', 3));
      const { grant, target } = folderTarget(afterSlug.slice('/raw'.length), false);
      if (!isValidSlug(slug) || !afterSlug.startsWith('/raw/')) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      if (target.kind === 'redirect') {
        const location = `/p/${slug}/raw${target.location}`;
        return redirect(reply, search === undefined ? location : `${location}?${search}`);
      }
      if (target.kind !== 'folder' && target.kind !== 'file') return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const { version } = target;
      const entry =
        target.kind === 'folder'
          ? await routes.loadRaw({ slug }, version, true)
          : await routes.loadFile({ slug }, version, target.path);
      if (entry === undefined) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const presented = isGated(entry) ? visitorOf(routes, request, accessOf(request)) : accessOf(request);
      const access = grant === undefined ? presented : { ...presented, capability: grant };
      const verdict = await rawVerdict(routes.view, entry, entry.answers, access);
      if (verdict.kind === 'expired') return refusePage(reply, 'expired', EXPIRED_PAGE);
      if (verdict.kind === 'refused') return refuseAccess(routes, request, reply, verdict, viewerPathOf(slug, version));
      if (verdict.kind === 'locked') {
        return refusePage(reply, 'locked', passcodeRequiredPage(`/p/${slug}?v=${version}`), PRIVATE);
      }
      return sendDocument(request, reply, verdict, { version, surface: 'raw', now: routes.view.clock.now() });
    },
  });
}

/** `/p/<slug>[?v=<n>]`: the viewer page, the passcode gate, or a 404 page. */
function registerViewerRoute(app: TypedApp, routes: PublicRoutes): void {
  const { config, renders } = routes;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug',
    schema: { hide: true },
    handler: async (request, reply) => {
      // The same URL answers a viewer page or a readable copy, by the Accept header (docs/api.md, "Readable copy").
      reply.header('vary', 'Accept');
      if (prefersMarkdown(request.headers.accept)) return answerReadableCopy(request, reply, routes);
      const { slug } = request.params as Params;
      if (!isValidSlug(slug)) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const askedFor = (request.query as Query).v;
      const requested = requestedVersion(askedFor);
      const own = routes.contentHosts?.origins;
      // The cookie only: a grant in the URL (the frame's) must not open the viewer, which hands out a new one.
      const access = visitorOf(routes, request, {
        capability: cookieValue(request.headers.cookie, CAPABILITY_COOKIE),
        authorization: undefined,
      });
      const frameOf = (d: DropRecord) => (own === undefined || d.contentLabel === null ? 'raw' : 'own-origin');
      const page = await findViewerPage(routes.view, slug, requested, access, frameOf);
      if (page.kind === 'not_found') return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      if (page.kind === 'expired') return refusePage(reply, 'expired', EXPIRED_PAGE);
      if (page.kind === 'refused') {
        const back = viewerPathOf(slug, typeof requested === 'number' ? requested : undefined);
        return refuseAccess(routes, request, reply, page, back);
      }
      if (page.kind === 'locked') {
        const nonce = routes.pageNonce(reply);
        // No byte of the drop, not even its title or whether a version exists, before the passcode.
        const versionQuery = typeof requested === 'number' ? `?v=${requested}` : '';
        const card = linkCardOf(config.baseUrl, slug, undefined, undefined);
        const gate = renderGate({ slug, action: `/p/${slug}/unlock${versionQuery}`, error: null, nonce, card });
        return showPage(reply, gate, PRIVATE);
      }
      if (page.kind === 'version_not_found') {
        return refusePage(
          reply,
          'version_not_found',
          versionNotFoundPage(slug, String(askedFor).slice(0, 40), page.latestVersion),
        );
      }
      const { drop, shown, versions, frameCapability, admitted } = page;
      // A link that opened the drop is kept for its other paths (the Raw link, other versions), never beyond them.
      const fromQuery = (request.query as Query)[LINK_PARAM];
      if (admitted.linkId !== undefined && isLinkSecret(fromQuery)) {
        reply.header(
          'set-cookie',
          serializeCookie(LINK_COOKIE, fromQuery, {
            path: `/p/${slug}`,
            maxAgeSeconds: 30 * 24 * 60 * 60,
            sameSite: 'Lax',
            secure: config.baseUrl.startsWith('https:'),
          }),
        );
      }
      const { rawUrl, frameOrigin, frameSrc } = frameOfVersion(routes, drop, shown, frameCapability);
      const nonce = routes.pageNonce(reply, frameOrigin);
      const shownAsked = typeof requested === 'number' ? requested : undefined;
      const before = commentsBefore((request.query as Query).comments_before);
      const panel = await viewerComments(routes.viewerComments, request, drop, shown.version, shownAsked, before);
      const html = renderViewer({
        slug,
        title: drop.title,
        description: drop.description ?? '',
        version: shown.version,
        latestVersion: drop.latestVersion,
        versions: versions.map((v) => ({ version: v.version, createdAt: v.createdAt })),
        createdAt: shown.createdAt,
        context: shown.context,
        frameSrc,
        ...(frameOrigin === undefined ? {} : { frameOrigin }),
        renewTicket: frameOrigin !== undefined && frameCapability !== undefined,
        rawUrl,
        canonicalUrl: `${config.baseUrl}/p/${slug}`,
        card: linkCardOf(config.baseUrl, slug, shown.version, drop.locked ? undefined : { asked: shownAsked }),
        nonce,
        ...(panel === undefined ? {} : { comments: panel }),
        pinned: shownAsked !== undefined,
      });
      // Counted for the version shown, under a daily viewer hash (domain/viewer-id.ts); no address is kept. The live
      // page's refresh of its comments is not a render; its move to a new version is (docs/api.md, "Live pages").
      if (request.method === 'GET' && request.headers['x-htmldrop-live'] !== 'comments') {
        countRender(renders, slug, shown.version, request.ip, request.headers['user-agent'] ?? '');
        await recordView(routes.view, slug, shown.version, admitted);
      }
      // Not cached by shared caches, so every render reaches the view count; a gated drop's by no cache at all.
      const gated = drop.locked || drop.visibility !== 'public' || admitted.linkId !== undefined;
      return showPage(reply, html, gated ? PRIVATE : { cacheControl: 'no-cache' });
    },
  });
}

/**
 * Where a version's frame shows it, for the viewer and the embed: the version's folder (docs/api.md, "Many files in
 * one drop"), where its document's relative URLs reach its own files, on the drop's own origin when one is
 * configured (storage works there), else on the raw path's opaque origin. A locked drop's iframe carries a grant
 * first in its path (a short-lived ticket on a content host), so the document and every file it loads open inside
 * the frame whatever the browser's cookie policy for frames. The Raw link does not: it opens in a tab of this
 * browser, where the capability cookie (path /p/<slug>) opens it, and a copied link does not hand out access; a
 * version without files keeps the Raw link of section 4.6.
 */
function frameOfVersion(
  routes: PublicRoutes,
  drop: DropRecord,
  shown: { readonly version: number; readonly hasFiles: boolean },
  frameCapability: string | undefined,
): { rawUrl: string; frameOrigin: string | undefined; frameSrc: string } {
  const { slug } = drop;
  const folder = `/v/${shown.version}/`;
  const rawUrl = shown.hasFiles ? `/p/${slug}/raw${folder}` : `/p/${slug}/raw?v=${shown.version}`;
  const own = routes.contentHosts?.origins;
  const frameOrigin = drop.contentLabel === null ? undefined : own?.originOf(drop.contentLabel);
  const grant = frameCapability === undefined ? '' : `/~${encodeURIComponent(frameCapability)}`;
  const frameSrc = frameOrigin === undefined ? `/p/${slug}/raw${grant}${folder}` : `${frameOrigin}${grant}${folder}`;
  return { rawUrl, frameOrigin, frameSrc };
}

/**
 * A page's link card (docs/api.md, "Previews and embeds"): the version's image (the generic protected card for a
 * visitor who cannot open the drop), and the oEmbed answer of an open drop.
 */
function linkCardOf(
  baseUrl: string,
  slug: string,
  image: number | undefined,
  oembed: { readonly asked: number | undefined } | undefined,
): LinkCard {
  const imageUrl = `${baseUrl}/p/${slug}/preview.png${image === undefined ? '' : `?v=${image}`}`;
  if (oembed === undefined) return { imageUrl };
  // The page's own URL: the latest stays the latest in an embed; a pinned version stays pinned.
  const viewer = `${baseUrl}/p/${slug}${oembed.asked === undefined ? '' : `?v=${oembed.asked}`}`;
  return { imageUrl, oembedUrl: `${baseUrl}/oembed?url=${encodeURIComponent(viewer)}&format=json` };
}

/** `/p/<slug>/embed[?v=<n>]`: the chrome-less embed of the viewer (docs/api.md, "Previews and embeds"). */
function registerEmbedRoute(app: TypedApp, routes: PublicRoutes): void {
  const { config, renders } = routes;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/embed',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as Params;
      if (!isValidSlug(slug)) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const requested = requestedVersion((request.query as Query).v);
      const own = routes.contentHosts?.origins;
      const access = pageVisitorOf(sessionsOf(routes), request);
      const frameOf = (d: DropRecord) => (own === undefined || d.contentLabel === null ? 'raw' : 'own-origin');
      const page = await findViewerPage(routes.view, slug, requested, access, frameOf);
      const versionQuery = typeof requested === 'number' ? `?v=${requested}` : '';
      const viewerUrl = `${config.baseUrl}/p/${slug}${versionQuery}`;
      if (page.kind === 'not_found' || page.kind === 'version_not_found') {
        return refusePage(reply, page.kind, NOT_FOUND_PAGE);
      }
      if (page.kind === 'expired') return refusePage(reply, 'expired', EXPIRED_PAGE);
      if (page.kind !== 'visible') {
        // Nothing of the drop: a link to open it in the viewer, where its gate is.
        const nonce = routes.pageNonce(reply);
        return showPage(reply, renderProtectedEmbed({ viewerUrl, nonce }), PRIVATE);
      }
      const { drop, shown, frameCapability } = page;
      const { frameOrigin, frameSrc } = frameOfVersion(routes, drop, shown, frameCapability);
      const nonce = routes.pageNonce(reply, frameOrigin);
      const html = renderEmbed({
        title: drop.title,
        version: shown.version,
        frameSrc,
        ...(frameOrigin === undefined ? {} : { frameOrigin }),
        renewTicket: frameOrigin !== undefined && frameCapability !== undefined,
        viewerUrl,
        nonce,
      });
      // A render of the drop, as the viewer's.
      if (request.method === 'GET') {
        countRender(renders, slug, shown.version, request.ip, request.headers['user-agent'] ?? '');
      }
      return showPage(reply, html, drop.locked ? PRIVATE : { cacheControl: 'no-cache' });
    },
  });
}

/**
 * Whether the Accept header asks for the readable copy (RFC 9110, section 12.5.1): `text/markdown` named with a
 * non-zero quality, and preferred to `text/html` or `text/html` not named. A browser (`text/html,…,*\/*;q=0.8`) and
 * a client sending `*\/*` or nothing get the viewer.
 */
export function prefersMarkdown(accept: string | undefined): boolean {
  if (accept === undefined || !/\btext\/markdown\b/i.test(accept)) return false;
  const markdown = acceptQuality(accept, 'text/markdown');
  if (markdown === 0) return false;
  return !/\btext\/html\b/i.test(accept) || markdown > acceptQuality(accept, 'text/html');
}

/** `/p/<slug>.md[?v=<n>]`: the readable copy, whatever the Accept header. */
function registerReadableCopyRoute(app: TypedApp, routes: PublicRoutes): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug.md',
    schema: { hide: true },
    handler: (request, reply) => answerReadableCopy(request, reply, routes),
  });
}

/**
 * A refusal of the readable copy: short Markdown for an agent, never an HTML page; the status is the code's in the
 * catalogue, as for pages (page-reply.ts).
 */
function refuseReadableCopy(
  reply: FastifyReply,
  code: ErrorCode,
  text: string,
  cacheControl = 'no-store',
  retryAfterSeconds?: number,
) {
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  return reply
    .code(ERROR_STATUS[code])
    .header('content-type', 'text/markdown; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cacheControl)
    .send(text);
}

const NOT_FOUND_TEXT = '# Not found\n\nNo drop at this address.\n';

/**
 * The readable copy of a drop (docs/api.md, "Readable copy (Markdown)"): the drop's details, its document as
 * Markdown and the version's context. A locked drop opens with the capability cookie or the owner's token, as the
 * viewer and the raw document do. Not a render: no view is counted (docs/decisions/0025-markdown-copy.md).
 */
async function answerReadableCopy(request: FastifyRequest, reply: FastifyReply, routes: PublicRoutes) {
  const { slug } = request.params as Params;
  if (!isValidSlug(slug)) return refuseReadableCopy(reply, 'not_found', NOT_FOUND_TEXT);
  const viewer = `${routes.config.baseUrl}/p/${slug}`;
  const requested = requestedVersion((request.query as Query).v);
  const access: VisitorAccess = visitorOf(routes, request, {
    capability: cookieValue(request.headers.cookie, CAPABILITY_COOKIE),
    authorization: request.headers.authorization,
  });
  const copy = await findReadableCopy(routes.view, slug, requested, access);
  switch (copy.kind) {
    case 'not_found':
      return refuseReadableCopy(reply, 'not_found', NOT_FOUND_TEXT);
    case 'expired':
      return refuseReadableCopy(reply, 'expired', '# Expired\n\nThis drop has expired.\n');
    case 'locked':
      // No byte of the drop, not even its title, without a capability or the owner's token.
      return refuseReadableCopy(
        reply,
        'locked',
        `# Locked\n\nThis drop is locked. Open ${viewer} and enter its passcode, or send its owner's token ` +
          '(`Authorization: Bearer hd_...`).\n',
        CACHE_PRIVATE,
      );
    case 'refused': {
      // Nothing of the drop (docs/api.md, "Who can see a drop"): how to get in, in words an agent can act on.
      const signedIn = copy.who.kind === 'person';
      return refuseReadableCopy(
        reply,
        signedIn ? 'not_on_list' : 'sign_in_required',
        signedIn
          ? `# Not on the list\n\n${copy.who.name ?? 'This person'} is not among the people this drop is shared with.\n`
          : `# Sign in required\n\nThis drop is shared with specific people. Open ${viewer} and sign in, send its owner's token, or use a recipient link the owner gave you.\n`,
        CACHE_PRIVATE,
      );
    }
    case 'version_not_found':
      return refuseReadableCopy(
        reply,
        'version_not_found',
        `# Version not found\n\nThis version does not exist. The latest is ${copy.latestVersion}: ${viewer}.md\n`,
        CACHE_PRIVATE,
      );
  }
  const { drop, shown } = copy;
  const text = await routes.readableCopies.readableText({
    key: readableVersionKey(drop, shown),
    document: () => readableDocument(routes.view, slug, shown.version),
    context: shown.context ?? '',
  });
  // Deleted between the two reads: as if it had never been there.
  if (text === undefined) return refuseReadableCopy(reply, 'not_found', NOT_FOUND_TEXT);
  const privacy = drop.locked || drop.visibility !== 'public' ? CACHE_PRIVATE : 'no-cache';
  if (text.outcome === 'busy') {
    // Too many conversions wait: a retry later, not a pile of waiting requests (docs/api.md, "Readable copy").
    const busy = `# Busy\n\nToo many documents are waiting to be converted. Ask again in ${text.retryAfterSeconds} s.\n`;
    return refuseReadableCopy(reply, 'busy', busy, drop.locked ? CACHE_PRIVATE : 'no-store', text.retryAfterSeconds);
  }
  if (text.detail !== undefined) {
    const { outcome, detail, convertMs } = text;
    request.log.warn({ slug, version: shown.version, outcome, detail, convertMs }, 'readable copy fell back to text');
  }
  const head = readableCopyHead({
    drop,
    shown,
    textOnly: text.outcome === 'converted' ? undefined : text.outcome === 'unreadable' ? 'unreadable' : 'limits',
    baseUrl: routes.config.baseUrl,
  });
  const pieces = [Buffer.from(head), text.document];
  if (text.context.length > 0) pieces.push(Buffer.from(CONTEXT_HEADING), text.context);
  pieces.push(Buffer.from('\n'));
  return reply
    .code(200)
    .header('content-type', 'text/markdown; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', privacy)
    .send(Buffer.concat(pieces));
}

/** `POST /p/<slug>/unlock`: the passcode form, limited per client and per drop (domain/viewing.ts). */
function registerUnlockRoute(app: TypedApp, routes: PublicRoutes): void {
  const { config, capabilities } = routes;
  const secureCookie = config.baseUrl.startsWith('https:');
  const ownOrigin = new URL(config.baseUrl).origin;
  // The gate again, saying why the form was refused (never echoing a passcode); an unknown slug is the 404 page.
  const refuseForm: FormRefusal = async (request, reply, error) => {
    const target = publicTarget(request);
    if (target === undefined) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
    if (error.status >= 500) return refusePage(reply, error, failedPage(error));
    const action = `/p/${target.slug}/unlock${target.version === undefined ? '' : `?v=${target.version}`}`;
    const nonce = routes.pageNonce(reply);
    return refusePage(
      reply,
      error,
      renderGate({ slug: target.slug, action, error: 'form', detail: error.message, nonce }),
      PRIVATE,
    );
  };
  // The passcode form posts application/x-www-form-urlencoded; this encapsulated context parses it.
  app.register(async (gate) => {
    acceptFormPosts(gate, { bodyLimit: SMALL_FORM_BYTES, refuse: refuseForm });
    gate.post('/p/:slug/unlock', { schema: { hide: true } }, async (request, reply) => {
      const target = publicTarget(request);
      if (target === undefined) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const { slug, version: requested } = target;
      const versionQuery = requested === undefined ? '' : `?v=${requested}`;
      const nonce = routes.pageNonce(reply);
      const action = `/p/${slug}/unlock${versionQuery}`;
      // Another site (or a drop, from its opaque origin) must not spend a visitor's attempts or plant a
      // capability: refused before the passcode is looked at, and not counted.
      if (isForeignFormPost(request.headers, ownOrigin)) {
        return refusePage(reply, 'cross_site', renderGate({ slug, action, error: 'foreign', nonce }), PRIVATE);
      }
      const result = await unlockDrop(routes.unlock, slug, request.ip, formField(request.body, 'passcode'));
      switch (result.kind) {
        case 'not_found':
          return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
        case 'open':
          return reply.code(303).header('cache-control', CACHE_PRIVATE).redirect(`/p/${slug}${versionQuery}`, 303);
        case 'rate_limited': {
          const { retryAfterSeconds } = result;
          const page = renderGate({ slug, action, error: 'rate_limited', retryAfterSeconds, nonce });
          return refusePage(reply, 'rate_limited', page, { ...PRIVATE, retryAfterSeconds });
        }
        case 'wrong':
          await refuseWrongPasscode(routes.view, slug, { person: personOf(sessionsOf(routes), request) }, null);
          return refusePage(reply, 'wrong_passcode', renderGate({ slug, action, error: 'wrong', nonce }), PRIVATE);
        case 'granted': {
          const cookie = serializeCookie(CAPABILITY_COOKIE, result.token, {
            path: `/p/${slug}`,
            maxAgeSeconds: Math.floor(capabilities.ttlMs / 1000),
            sameSite: 'Lax',
            secure: secureCookie,
          });
          reply.header('set-cookie', cookie).header('cache-control', CACHE_PRIVATE);
          return reply.redirect(`/p/${slug}${versionQuery}`, 303);
        }
      }
    });
  });
}

/**
 * `/v/<n>` to `/v/<n>/` (docs/api.md, "Many files in one drop"): only there do the document's relative URLs resolve
 * to its version's files. Permanent (308): the address of a version's folder never changes.
 */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(308).header('location', location).header('cache-control', 'no-store').send();
}

/** Hands the reply to serve/raw-answer.ts, which writes the document (the raw path's and the content host's). */
export function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  verdict: Extract<RawVerdict, { kind: 'send' }>,
  target: Parameters<typeof sendRawDocument>[3],
): FastifyReply {
  reply.hijack();
  sendRawDocument(request.raw, reply.raw, verdict, target, (error) =>
    // Past the hijack Fastify's error handler no longer answers.
    request.log.error({ err: error, reqId: request.id }, 'raw answer failed'),
  );
  return reply;
}
