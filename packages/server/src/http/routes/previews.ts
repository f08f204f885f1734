/**
 * Previews and embeds (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md):
 * `GET /p/<slug>/preview.png[?v=<n>]`, a version's 1200x630 image. Who sees what is the viewer's decision
 * (domain/previews.ts over domain/public-view.ts): a visitor who cannot open the drop gets the generic protected
 * card, never a byte of the drop.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { findPreviewAccess, type PreviewAccess } from '../../domain/previews.js';
import type { PublicViewDeps } from '../../domain/public-view.js';
import type { PreviewImage, Previews } from '../../serve/previews.js';
import { CACHE_PRIVATE } from '../../serve/raw.js';
import { cookieValue } from '../cookies.js';
import { refusePage } from '../page-reply.js';
import { EXPIRED_PAGE, NOT_FOUND_PAGE } from '../pages/layout.js';
import type { TypedApp } from '../typed-app.js';
import { CAPABILITY_COOKIE } from './public.js';

export interface PreviewRouteDeps {
  readonly config: Config;
  readonly view: PublicViewDeps;
  readonly previews: Previews;
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
  request: FastifyRequest,
  slug: string,
  requested: number | null | undefined,
): Promise<PreviewAccess> {
  const access = { capability: cookieValue(request.headers.cookie, CAPABILITY_COOKIE), authorization: undefined };
  return findPreviewAccess(view, slug, requested, access);
}

export async function previewRoutes(app: TypedApp, deps: PreviewRouteDeps): Promise<void> {
  const { view, previews } = deps;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/preview.png',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as { slug: string };
      if (!isValidSlug(slug)) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
      const askedFor = (request.query as Query).v;
      const found = await previewAccessOf(view, request, slug, requestedVersion(askedFor));
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

/** The PNG, or 304 when the client holds it (If-None-Match). */
function sendImage(request: FastifyRequest, reply: FastifyReply, image: PreviewImage, cacheControl: string) {
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
