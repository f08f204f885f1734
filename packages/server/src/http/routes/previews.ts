/**
 * Previews and embeds (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md):
 * `GET /p/<slug>/preview.png[?v=<n>]`, a version's 1200x630 image, and `GET /oembed?url=<a viewer URL>`, the oEmbed
 * 1.0 answer whose iframe shows the chrome-less embed (public.ts). Who sees what is the viewer's decision
 * (domain/previews.ts over domain/public-view.ts): a visitor who cannot open the drop gets the generic protected
 * card, never a byte of the drop.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { findPreviewAccess, type PreviewAccess } from '../../domain/previews.js';
import type { PublicViewDeps } from '../../domain/public-view.js';
import { ApiError } from '../../errors.js';
import type { PreviewImage, Previews } from '../../serve/previews.js';
import { CACHE_PRIVATE } from '../../serve/raw.js';
import { refusePage } from '../page-reply.js';
import { EXPIRED_PAGE, escapeHtml, NOT_FOUND_PAGE } from '../pages/layout.js';
import type { TypedApp } from '../typed-app.js';
import type { WebSessions } from '../web-session.js';
import { pageVisitorOf } from './public.js';

export interface PreviewRouteDeps {
  readonly config: Config;
  readonly view: PublicViewDeps;
  readonly previews: Previews;
  /** The one session of the service's pages: a person a drop is shared with sees its image. */
  readonly sessions: WebSessions;
}

/** How long a shared cache may keep an open drop's image: short, so a new lock or title shows soon. */
const PUBLIC_SECONDS = 300;

type Query = Record<string, string | string[] | undefined>;

/** `?v=<n>`: undefined when absent, null when it names no possible version. */
function requestedVersion(v: unknown): number | undefined | null {
  return v === undefined ? undefined : (parseVersionNumber(v) ?? null);
}

/** What the visitor of a `/p/<slug>…` URL may see of it, with the capability cookie (the viewer's). */
export function previewAccessOf(
  view: PublicViewDeps,
  sessions: WebSessions,
  request: FastifyRequest,
  slug: string,
  requested: number | null | undefined,
): Promise<PreviewAccess> {
  return findPreviewAccess(view, slug, requested, pageVisitorOf(sessions, request));
}

export async function previewRoutes(app: TypedApp, deps: PreviewRouteDeps): Promise<void> {
  const { view, previews } = deps;
  registerOEmbedRoute(app, deps);
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/preview.png',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as { slug: string };
      if (!isValidSlug(slug)) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const askedFor = (request.query as Query).v;
      const found = await previewAccessOf(view, deps.sessions, request, slug, requestedVersion(askedFor));
      switch (found.kind) {
        case 'refused':
          return refusePage(reply, found.code, found.code === 'expired' ? EXPIRED_PAGE : NOT_FOUND_PAGE);
        case 'protected':
          // The same answer for every drop the visitor cannot open, whatever it holds.
          return sendImage(request, reply, await previews.protectedCard(), CACHE_PRIVATE);
        case 'visible': {
          const { drop, shown } = found;
          const now = view.clock.now();
          // No cache may keep it past the drop's expiry (docs/api.md, "Expiry"); a locked drop's only privately.
          const seconds =
            drop.expiresAt === null
              ? PUBLIC_SECONDS
              : Math.min(PUBLIC_SECONDS, Math.floor((drop.expiresAt - now) / 1000));
          const cacheControl = drop.locked ? CACHE_PRIVATE : `public, max-age=${Math.max(0, seconds)}`;
          return sendImage(request, reply, await previews.imageOf(drop, shown), cacheControl);
        }
      }
    },
  });
}

/** The embed's size when the consumer sets no bound (oEmbed 1.0, section 2.3.4: maxwidth and maxheight). */
const EMBED_WIDTH = 800;
const EMBED_HEIGHT = 600;
const IMAGE_WIDTH = 1200;
const IMAGE_HEIGHT = 630;

/** A `maxwidth` or `maxheight`: a positive whole number of pixels, or absent. */
function bound(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[1-9]\d{0,5}$/.test(value)) {
    throw new ApiError('invalid_arg', { message: `${field} must be a positive whole number`, details: { field } });
  }
  return Number(value);
}

/** The drop and version a viewer URL of this service names (`{base_url}/p/<slug>[?v=<n>]`), or undefined. */
function viewerTarget(baseUrl: string, url: string): { slug: string; version: number | null | undefined } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const base = new URL(baseUrl);
  if (parsed.origin !== base.origin) return undefined;
  const prefix = `${base.pathname.replace(/\/$/, '')}/p/`;
  if (!parsed.pathname.startsWith(prefix)) return undefined;
  const slug = parsed.pathname.slice(prefix.length).replace(/\/$/, '');
  if (!isValidSlug(slug)) return undefined;
  const v = parsed.searchParams.get('v');
  return { slug, version: v === null ? undefined : (parseVersionNumber(v) ?? null) };
}

/** `GET /oembed`: oEmbed 1.0 (https://oembed.com, section 2), JSON only. */
function registerOEmbedRoute(app: TypedApp, deps: PreviewRouteDeps): void {
  const { config, view } = deps;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/oembed',
    schema: { hide: true },
    handler: async (request, reply) => {
      const query = request.query as Query;
      // Any consumer may read it, from a page's script too: it says what the public viewer says.
      reply.header('access-control-allow-origin', '*');
      const format = query.format;
      if (format !== undefined && format !== 'json') throw new ApiError('unsupported_format');
      const url = query.url;
      if (typeof url !== 'string' || url === '') {
        throw new ApiError('invalid_arg', {
          message: "url is required: a drop's viewer URL",
          details: { field: 'url' },
        });
      }
      const maxWidth = bound(query.maxwidth, 'maxwidth');
      const maxHeight = bound(query.maxheight, 'maxheight');
      const target = viewerTarget(config.baseUrl, url);
      if (target === undefined) throw new ApiError('not_found');
      const found = await previewAccessOf(view, deps.sessions, request, target.slug, target.version);
      // As the viewer would: unknown 404, expired 410, a drop this consumer cannot open 401 (oEmbed 1.0, 2.3.5).
      if (found.kind === 'refused') throw new ApiError(found.code);
      if (found.kind === 'protected') throw new ApiError('locked');
      const { drop, shown } = found;
      const width = Math.min(EMBED_WIDTH, maxWidth ?? EMBED_WIDTH);
      const height = Math.min(EMBED_HEIGHT, maxHeight ?? EMBED_HEIGHT);
      const pinned = target.version === undefined ? '' : `?v=${shown.version}`;
      const embedUrl = `${config.baseUrl}/p/${drop.slug}/embed${pinned}`;
      const title = drop.title;
      const answer: Record<string, string | number> = {
        version: '1.0',
        type: 'rich',
        provider_name: 'htmldrop',
        provider_url: `${config.baseUrl}/`,
        title,
        html: `<iframe src="${escapeHtml(embedUrl)}" width="${width}" height="${height}" title="${escapeHtml(title)}" style="border:0" loading="lazy" referrerpolicy="no-referrer" allowfullscreen></iframe>`,
        width,
        height,
        cache_age: PUBLIC_SECONDS,
      };
      // The image is 1200x630: offered only where it fits the consumer's bounds (section 2.3.4).
      if ((maxWidth ?? IMAGE_WIDTH) >= IMAGE_WIDTH && (maxHeight ?? IMAGE_HEIGHT) >= IMAGE_HEIGHT) {
        answer.thumbnail_url = `${config.baseUrl}/p/${drop.slug}/preview.png?v=${shown.version}`;
        answer.thumbnail_width = IMAGE_WIDTH;
        answer.thumbnail_height = IMAGE_HEIGHT;
      }
      return reply
        .code(200)
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', drop.locked ? CACHE_PRIVATE : `public, max-age=${PUBLIC_SECONDS}`)
        .send(JSON.stringify(answer));
    },
  });
}

/** The PNG, or 304 when the client holds it (If-None-Match). */
export function sendImage(request: FastifyRequest, reply: FastifyReply, image: PreviewImage, cacheControl: string) {
  reply
    .header('content-type', 'image/png')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cacheControl)
    .header('etag', image.etag)
    .header('x-preview', image.kind);
  const held = request.headers['if-none-match'];
  if (held?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === image.etag)) {
    return reply.code(304).send();
  }
  return reply.code(200).send(Buffer.from(image.png.buffer, image.png.byteOffset, image.png.byteLength));
}
