/**
 * Each drop on its own origin (docs/api.md, "Each drop on its own origin"; docs/decisions/0024-content-origins.md).
 * A request whose Host is a content host is rewritten, before routing, under CONTENT_PREFIX (see
 * `contentUrlRewriter`), so it can reach this route and nothing else: no API, no /verify, no console, no other drop.
 * Here it gets that drop's document (`/` latest, `/?v=<n>`, `/v/<n>/`) or one of its files (`/<path>` of the latest
 * version, `/v/<n>/<path>`: docs/api.md, "Many files in one drop") from the raw cache with the content host's
 * headers, a locked drop only with the ticket the viewer handed its frame (in `cap`, or first in the path,
 * `/~<ticket>/…`), or one of three small pages.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { ContentHosts } from '../../domain/content-origin.js';
import { type FolderTarget, folderTarget } from '../../domain/files.js';
import { parseVersionNumber } from '../../domain/ids.js';
import type { PublicViewDeps } from '../../domain/public-view.js';
import { CACHE_PRIVATE } from '../../serve/raw.js';
import { rawVerdict } from '../../serve/raw-answer.js';
import type { RawEntry } from '../../serve/raw-cache.js';
import type { FileLoader, RawLoader } from '../../serve/raw-loader.js';
import { refusePage } from '../page-reply.js';
import { contentExpiredPage, contentLockedPage, contentNotFoundPage } from '../pages/content-host.js';
import type { TypedApp } from '../typed-app.js';
import { CAPABILITY_PARAM, redirect, sendDocument } from './public.js';

/** Where content-host requests are routed internally; no link ever names it. */
export const CONTENT_PREFIX = '/_content';

/**
 * Fastify's `rewriteUrl`: every request to a content host, whatever its path, goes under CONTENT_PREFIX. Runs before
 * routing, for real connections and inject() alike, so no other route can answer a content host.
 */
export function contentUrlRewriter(content: ContentHosts | undefined): (request: IncomingMessage) => string {
  return (request) => {
    const url = request.url ?? '/';
    return content?.origins.isContentHost(request.headers.host) === true ? `${CONTENT_PREFIX}${url}` : url;
  };
}

export interface ContentHostDeps {
  readonly config: Config;
  /** The configured content origins; undefined: every request here is a 404. */
  readonly content: ContentHosts | undefined;
  readonly view: PublicViewDeps;
  readonly loadRaw: RawLoader;
  readonly loadFile: FileLoader;
}

type Query = Record<string, string | string[] | undefined>;

export async function contentHostRoutes(app: TypedApp, deps: ContentHostDeps): Promise<void> {
  const { content, config } = deps;
  const serviceOrigin = new URL(config.baseUrl).origin;
  // The pages here show inside the viewer's frame, as the drop would.
  const ancestors = content?.frameAncestors ?? "'none'";
  const pageCsp = (nonce?: string) =>
    [
      "default-src 'none'",
      "style-src 'unsafe-inline'",
      nonce === undefined ? undefined : `script-src 'nonce-${nonce}'`,
      "base-uri 'none'",
      "form-action 'none'",
      `frame-ancestors ${ancestors}`,
    ]
      .filter((d) => d !== undefined)
      .join('; ');
  const refuse = (reply: FastifyReply, code: 'not_found' | 'expired', html: string) =>
    refusePage(reply, code, html, { headers: { 'content-security-policy': pageCsp() } });

  /** The document or file a target names, through the raw cache; undefined for none. */
  const load = async (label: string, target: FolderTarget, query: Query) => {
    if (target.kind === 'file')
      return { version: target.version, entry: await deps.loadFile({ label }, target.version, target.path) };
    if (target.kind === 'folder')
      return { version: target.version, entry: await deps.loadRaw({ label }, target.version, true) };
    if (target.kind !== 'document') return undefined;
    // `?v=` that names no possible version (`abc`, `0`, repeated) is a 404, as on the raw path.
    const requested = query.v === undefined ? undefined : parseVersionNumber(query.v);
    if (query.v !== undefined && requested === undefined) return undefined;
    return { version: requested, entry: await deps.loadRaw({ label }, requested) };
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const label = content?.origins.labelOf(request.headers.host);
    const [path = '/', search] = request.url.slice(CONTENT_PREFIX.length).split('?', 2);
    const query = request.query as Query;
    const { grant, target } = folderTarget(path, true);
    if (label === undefined || (request.method !== 'GET' && request.method !== 'HEAD') || target.kind === 'none') {
      return refuse(reply, 'not_found', contentNotFoundPage(config.baseUrl));
    }
    if (target.kind === 'redirect')
      return redirect(reply, search === undefined ? target.location : `${target.location}?${search}`);
    const loaded = await load(label, target, query);
    const entry: RawEntry | undefined = loaded?.entry;
    if (loaded === undefined || entry?.contentAnswers === undefined) {
      return refuse(reply, 'not_found', contentNotFoundPage(config.baseUrl));
    }
    // Only the ticket in the frame's URL (its path, or `cap`), or the owner's token: the service's cookies never
    // reach this host.
    const ticket = grant ?? query[CAPABILITY_PARAM];
    const access = {
      capability: undefined,
      ticket: typeof ticket === 'string' ? ticket : undefined,
      authorization: request.headers.authorization,
    };
    const verdict = await rawVerdict(deps.view, entry, entry.contentAnswers, access);
    if (verdict.kind === 'expired') return refuse(reply, 'expired', contentExpiredPage(config.baseUrl));
    if (verdict.kind === 'locked' || verdict.kind === 'refused') {
      // A refused visitor (docs/api.md, "Who can see a drop") gets the same page as a lapsed ticket: nothing of the
      // drop, and the viewer (on the service's host, where the visitor is known) decides again.
      const code =
        verdict.kind === 'locked' ? 'locked' : verdict.who.kind !== 'person' ? 'sign_in_required' : 'not_on_list';
      const nonce = randomBytes(16).toString('base64');
      return refusePage(reply, code, contentLockedPage(config.baseUrl, serviceOrigin, nonce), {
        cacheControl: CACHE_PRIVATE,
        headers: { 'content-security-policy': pageCsp(nonce) },
      });
    }
    return sendDocument(request, reply, verdict, {
      version: loaded.version,
      surface: 'content',
      now: deps.view.clock.now(),
    });
  };
  // `/` itself (the router takes `/_content/` as `/_content`: trailing slashes are ignored), then any other path.
  app.all(CONTENT_PREFIX, { schema: { hide: true } }, handler);
  app.all(`${CONTENT_PREFIX}/*`, { schema: { hide: true } }, handler);
}
