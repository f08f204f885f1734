/**
 * Public serving under /p/ (spec 4.6; docs/api.md 4.6): the viewer, the passcode gate and the raw
 * document. No API token needed; error answers are small HTML pages, never JSON. Untrusted HTML only ever runs in
 * a sandbox (iframe sandbox attribute and a sandbox CSP on the raw response), never with this origin's privileges.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/accounts.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { unlockDrop } from '../../domain/viewing.js';
import { writeRawAnswer } from '../../serve/fast-path.js';
import { buildRawEntry, CACHE_PRIVATE } from '../../serve/raw.js';
import { openPolicyOf, type RawEntry } from '../../serve/raw-cache.js';
import type { RouteContext, TypedApp } from '../app.js';
import { acceptFormPosts, formField, isForeignFormPost } from '../forms.js';
import { escapeHtml, NOT_FOUND_PAGE, simplePage, versionNotFoundPage } from '../pages/layout.js';
import { renderGate, renderViewer } from '../pages/viewer.js';
import { cookieValue, serializeCookie } from '../signed-cookie.js';

export const CAPABILITY_COOKIE = 'hd_cap';
export const CAPABILITY_PARAM = 'cap';

export function sendPage(reply: FastifyReply, status: number, html: string, cacheControl = 'no-store'): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cacheControl)
    .send(html);
}

/** Parses `?v=<n>`: undefined when absent, null when it names no possible version. */
function requestedVersion(v: unknown): number | undefined | null {
  return v === undefined ? undefined : (parseVersionNumber(v) ?? null);
}

/**
 * The viewer's own CSP: inline styles, nonce'd scripts, frames only from this origin, no external requests; and who
 * may frame the viewer itself (`frameAncestors`: the service, plus the configured embed origins).
 */
function viewerCsp(nonce: string, frameAncestors: string): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src 'nonce-${nonce}'`,
    "frame-src 'self'",
    "img-src 'self' data:",
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

export function registerPublicRoutes(app: TypedApp, ctx: RouteContext): void {
  const { rawCache, store, config, capabilities, views } = ctx;
  const secureCookie = config.baseUrl.startsWith('https:');
  const ownOrigin = new URL(config.baseUrl).origin;
  const frameAncestors = frameAncestorsOf(config.embedOrigins);

  async function loadRaw(slug: string, version: number | undefined): Promise<RawEntry | undefined> {
    const cached = rawCache.get(slug, version);
    if (cached !== undefined) return cached;
    const generation = rawCache.generation(slug);
    const drop = await store.findDrop(slug);
    if (drop === undefined) return undefined;
    const content = await store.getVersionContent(slug, version);
    if (content === undefined) return undefined;
    const entry = await buildRawEntry(drop, content);
    rawCache.set(entry, version, generation);
    return entry;
  }

  /** True when the request carries a valid capability for this drop's current passcode generation. */
  function hasCapability(request: FastifyRequest, slug: string, generation: number): boolean {
    const fromQuery = (request.query as Query)[CAPABILITY_PARAM];
    const token = typeof fromQuery === 'string' ? fromQuery : cookieValue(request.headers.cookie, CAPABILITY_COOKIE);
    return capabilities.verify(token, slug, generation);
  }

  /** The owner's bearer token also opens a locked drop's raw document. */
  async function isOwner(request: FastifyRequest, slug: string): Promise<boolean> {
    if (request.headers.authorization === undefined) return false;
    try {
      const caller = await authenticate(store, ctx.clock, ctx.tokenUses, request.headers.authorization);
      const drop = await store.findDrop(slug);
      return drop?.accountId === caller.account.id;
    } catch {
      return false;
    }
  }

  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug/raw',
    schema: { hide: true },
    handler: async (request, reply) => {
      const target = publicTarget(request);
      if (target === undefined) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const { slug, version } = target;
      const entry = await loadRaw(slug, version);
      if (entry === undefined) return sendPage(reply, 404, NOT_FOUND_PAGE);
      let policy = openPolicyOf(version);
      if (entry.locked) {
        policy = 'private';
        if (!hasCapability(request, slug, entry.passcodeGeneration) && !(await isOwner(request, slug))) {
          const viewer = `/p/${slug}${version === undefined ? '' : `?v=${version}`}`;
          return sendPage(
            reply,
            401,
            simplePage(
              'Passcode required',
              `<p>This drop is protected by a passcode. <a href="${escapeHtml(viewer)}">Open it in the viewer</a> to enter it.</p>`,
            ),
            CACHE_PRIVATE,
          );
        }
      }
      // The fast path's writer, so every raw document goes out through one code path (serve/fast-path.ts).
      reply.hijack();
      try {
        writeRawAnswer(request.raw, reply.raw, entry.answers[policy]);
      } catch (error) {
        // Past the hijack Fastify's error handler no longer answers: log, and do not leave the client waiting.
        request.log.error({ err: error, reqId: request.id }, 'raw answer failed');
        if (reply.raw.headersSent) reply.raw.destroy();
        else reply.raw.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
      }
      return reply;
    },
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: '/p/:slug',
    schema: { hide: true },
    handler: async (request, reply) => {
      const { slug } = request.params as Params;
      if (!isValidSlug(slug)) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const askedFor = (request.query as Query).v;
      // undefined: the latest; null: a `?v=` that names no version (answered below, after the passcode gate).
      const requested = requestedVersion(askedFor);
      const drop = await store.findDrop(slug);
      if (drop === undefined) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const nonce = randomBytes(16).toString('base64');
      reply.header('content-security-policy', viewerCsp(nonce, frameAncestors));
      const versionQuery = typeof requested === 'number' ? `?v=${requested}` : '';
      if (drop.locked && !hasCapability(request, slug, drop.passcodeGeneration)) {
        // No byte of the drop, not even its title or whether a version exists, before the passcode.
        const gate = renderGate({ slug, action: `/p/${slug}/unlock${versionQuery}`, error: null, nonce });
        return sendPage(reply, 200, gate, CACHE_PRIVATE);
      }
      const versionNotFound = () => {
        const named = String(askedFor).slice(0, 40);
        return sendPage(reply, 404, versionNotFoundPage(slug, named, drop.latestVersion), 'no-store');
      };
      if (requested === null) return versionNotFound();
      const number = requested ?? drop.latestVersion;
      const [shown, versions] = await Promise.all([store.getVersion(slug, number), store.listVersions(slug)]);
      if (shown === undefined) return versionNotFound();
      const rawUrl = `/p/${slug}/raw?v=${number}`;
      // A locked drop's iframe carries a capability token, so raw works inside the viewer whatever the browser's
      // cookie policy for frames. The Raw link does not: it opens in a tab of this browser, where the capability
      // cookie (path /p/<slug>) opens it, and a copied link does not hand out access.
      const frameSrc = drop.locked
        ? `${rawUrl}&${CAPABILITY_PARAM}=${encodeURIComponent(capabilities.issue(slug, drop.passcodeGeneration).token)}`
        : rawUrl;
      const html = renderViewer({
        slug,
        title: drop.title,
        description: drop.description ?? '',
        version: number,
        latestVersion: drop.latestVersion,
        versions: versions.map((v) => ({ version: v.version, createdAt: v.createdAt })),
        createdAt: shown.createdAt,
        context: shown.context,
        frameSrc,
        rawUrl,
        canonicalUrl: `${config.baseUrl}/p/${slug}`,
        nonce,
      });
      if (request.method === 'GET') views.record(slug);
      // Not cached by shared caches, so every render reaches the view count.
      return sendPage(reply, 200, html, drop.locked ? CACHE_PRIVATE : 'no-cache');
    },
  });

  // The passcode form posts application/x-www-form-urlencoded; this encapsulated context parses it.
  app.register(async (gate) => {
    acceptFormPosts(gate);
    gate.post('/p/:slug/unlock', { schema: { hide: true } }, async (request, reply) => {
      const target = publicTarget(request);
      if (target === undefined) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const { slug, version: requested } = target;
      const passcode = formField(request.body, 'passcode');
      const versionQuery = requested === undefined ? '' : `?v=${requested}`;
      const nonce = randomBytes(16).toString('base64');
      reply.header('content-security-policy', viewerCsp(nonce, frameAncestors));
      const action = `/p/${slug}/unlock${versionQuery}`;
      // Another site (or a drop, from its opaque origin) must not spend a visitor's attempts or plant a
      // capability: refused before the passcode is looked at, and not counted.
      if (isForeignFormPost(request.headers, ownOrigin)) {
        return sendPage(reply, 403, renderGate({ slug, action, error: 'foreign', nonce }), CACHE_PRIVATE);
      }
      const result = await unlockDrop(ctx.unlock, slug, request.ip, passcode);
      switch (result.kind) {
        case 'not_found':
          return sendPage(reply, 404, NOT_FOUND_PAGE);
        case 'open':
          return reply.code(303).header('cache-control', CACHE_PRIVATE).redirect(`/p/${slug}${versionQuery}`, 303);
        case 'rate_limited':
          reply.header('retry-after', String(result.retryAfterSeconds));
          return sendPage(
            reply,
            429,
            renderGate({ slug, action, error: 'rate_limited', retryAfterSeconds: result.retryAfterSeconds, nonce }),
            CACHE_PRIVATE,
          );
        case 'wrong':
          return sendPage(reply, 401, renderGate({ slug, action, error: 'wrong', nonce }), CACHE_PRIVATE);
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
