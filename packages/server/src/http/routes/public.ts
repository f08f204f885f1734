/** Public serving under /p/ (spec 4.6). No authentication; HTML error pages, never JSON. */
import type { FastifyReply } from 'fastify';
import { isValidSlug } from '../../domain/ids.js';
import { buildRawEntry, RAW_SECURITY_HEADERS } from '../../serve/raw.js';
import type { RawEntry } from '../../serve/raw-cache.js';
import type { RouteContext, TypedApp } from '../app.js';
import { escapeHtml, NOT_FOUND_PAGE, simplePage } from '../pages/layout.js';

/** Short shared caching for the latest version; `?v=<n>` never changes, so it is immutable. */
const CACHE_LATEST = 'public, max-age=60, s-maxage=60';
const CACHE_PINNED = 'public, max-age=31536000, immutable';
const CACHE_PRIVATE = 'private, no-store';

export function sendPage(reply: FastifyReply, status: number, html: string, cacheControl = 'no-store'): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cacheControl)
    .send(html);
}

/** Parses `?v=<n>`: undefined for absent, null for a malformed value. */
function requestedVersion(v: unknown): number | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^[1-9]\d{0,9}$/.test(v)) return null;
  return Number(v);
}

export function registerPublicRoutes(app: TypedApp, ctx: RouteContext): void {
  const { rawCache, store } = ctx;

  async function loadRaw(slug: string, version: number | undefined): Promise<RawEntry | undefined> {
    const cached = rawCache.get(slug, version);
    if (cached !== undefined) return cached;
    const generation = rawCache.generation(slug);
    const drop = await store.findDrop(slug);
    if (drop === undefined) return undefined;
    const content = await store.getVersionContent(slug, version);
    if (content === undefined) return undefined;
    const entry = buildRawEntry(drop, content);
    rawCache.set(entry, version, generation);
    return entry;
  }

  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/raw',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const version = requestedVersion((request.query as Record<string, unknown>).v);
      if (!isValidSlug(slug) || version === null) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const entry = await loadRaw(slug, version);
      if (entry === undefined) return sendPage(reply, 404, NOT_FOUND_PAGE);
      if (entry.locked) {
        const viewer = `/p/${encodeURIComponent(slug)}`;
        return sendPage(
          reply,
          401,
          simplePage(
            'Passcode required',
            `<p>This drop is protected. <a href="${escapeHtml(viewer)}">Open it in the viewer</a> to enter the passcode.</p>`,
          ),
          CACHE_PRIVATE,
        );
      }
      reply.headers(RAW_SECURITY_HEADERS);
      reply.header('etag', entry.etag);
      reply.header('cache-control', version === undefined ? CACHE_LATEST : CACHE_PINNED);
      if (request.headers['if-none-match'] === entry.etag) return reply.code(304).send();
      return reply.code(200).send(entry.body);
    },
  });
}
