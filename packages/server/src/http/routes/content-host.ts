/**
 * Each drop on its own origin (docs/api.md, "Each drop on its own origin"; docs/decisions/0024-content-origins.md).
 * A request whose Host is a content host is rewritten, before routing, under CONTENT_PREFIX (see
 * `contentUrlRewriter`), so it can reach this route and nothing else: no API, no /verify, no console, no other drop.
 * Here it gets that drop's document (`/` latest, `/?v=<n>`) from the raw cache with the content host's headers, a
 * locked drop only with the ticket the viewer handed its frame, or one of three small pages.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { ContentHosts } from '../../domain/content-origin.js';
import { parseVersionNumber } from '../../domain/ids.js';
import type { PublicViewDeps } from '../../domain/public-view.js';
import { CACHE_PRIVATE } from '../../serve/raw.js';
import { rawVerdict } from '../../serve/raw-answer.js';
import type { RawLoader } from '../../serve/raw-loader.js';
import { refusePage } from '../page-reply.js';
import { contentExpiredPage, contentLockedPage, contentNotFoundPage } from '../pages/content-host.js';
import type { TypedApp } from '../typed-app.js';
import { CAPABILITY_PARAM, sendDocument } from './public.js';

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

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const label = content?.origins.labelOf(request.headers.host);
    const path = request.url.slice(CONTENT_PREFIX.length).split('?', 1)[0];
    const version = (request.query as Query).v;
    // `?v=` that names no possible version (`abc`, `0`, repeated) is a 404, as on the raw path.
    const requested = version === undefined ? undefined : (parseVersionNumber(version) ?? null);
    if (
      label === undefined ||
      path !== '/' ||
      (request.method !== 'GET' && request.method !== 'HEAD') ||
      requested === null
    ) {
      return refuse(reply, 'not_found', contentNotFoundPage(config.baseUrl));
    }
    const entry = await deps.loadRaw({ label }, requested);
    if (entry?.contentAnswers === undefined) return refuse(reply, 'not_found', contentNotFoundPage(config.baseUrl));
    // Only the ticket in the frame's URL, or the owner's token: the service's cookies never reach this host.
    const ticket = (request.query as Query)[CAPABILITY_PARAM];
    const access = {
      capability: undefined,
      ticket: typeof ticket === 'string' ? ticket : undefined,
      authorization: request.headers.authorization,
    };
    const verdict = await rawVerdict(deps.view, entry, entry.contentAnswers, access);
    if (verdict.kind === 'expired') return refuse(reply, 'expired', contentExpiredPage(config.baseUrl));
    if (verdict.kind === 'locked') {
      const nonce = randomBytes(16).toString('base64');
      return refusePage(reply, 'locked', contentLockedPage(config.baseUrl, serviceOrigin, nonce), {
        cacheControl: CACHE_PRIVATE,
        headers: { 'content-security-policy': pageCsp(nonce) },
      });
    }
    return sendDocument(request, reply, verdict, {
      version: requested,
      surface: 'content',
      now: deps.view.clock.now(),
    });
  };
  // `/` itself (the router takes `/_content/` as `/_content`: trailing slashes are ignored), then any other path.
  app.all(CONTENT_PREFIX, { schema: { hide: true } }, handler);
  app.all(`${CONTENT_PREFIX}/*`, { schema: { hide: true } }, handler);
}
