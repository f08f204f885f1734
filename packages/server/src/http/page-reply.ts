/**
 * One way to answer with an HTML page (docs/api.md 7, "Pages"): `showPage` for a 200, `refusePage` for anything
 * else, whose status comes from the error catalogue (errors.ts) exactly as a JSON error's does. Every page carries
 * `nosniff`; callers add what their room needs (the service pages' CSP, the viewer's nonce CSP, caching).
 */
import type { FastifyReply } from 'fastify';
import { type ApiError, ERROR_STATUS, type ErrorCode } from '../errors.js';

export interface PageOptions {
  /** `Cache-Control`; `no-store` unless said otherwise. */
  readonly cacheControl?: string;
  /** `Referrer-Policy`; `no-referrer` unless said otherwise (a form posting to its own origin needs `same-origin`). */
  readonly referrerPolicy?: string;
  /** Further headers of this room (for example a CSP and `X-Frame-Options`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Seconds for `Retry-After` (a 429 page). */
  readonly retryAfterSeconds?: number;
}

function writePage(reply: FastifyReply, status: number, html: string, options: PageOptions): FastifyReply {
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', options.referrerPolicy ?? 'no-referrer')
    .header('cache-control', options.cacheControl ?? 'no-store');
  for (const [name, value] of Object.entries(options.headers ?? {})) reply.header(name, value);
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return reply.send(html);
}

/** A page that answers the request: 200. */
export function showPage(reply: FastifyReply, html: string, options: PageOptions = {}): FastifyReply {
  return writePage(reply, 200, html, options);
}

/** A page that refuses the request: the status is the code's in the catalogue (or the ApiError's own). */
export function refusePage(
  reply: FastifyReply,
  refusal: ErrorCode | ApiError,
  html: string,
  options: PageOptions = {},
): FastifyReply {
  const status = typeof refusal === 'string' ? ERROR_STATUS[refusal] : refusal.status;
  const retryAfterSeconds = typeof refusal === 'string' ? options.retryAfterSeconds : refusal.retryAfterSeconds;
  return writePage(reply, status, html, { ...options, retryAfterSeconds });
}

/** The service pages' CSP, directive by directive. */
const SERVICE_CSP: Readonly<Record<string, string>> = {
  'default-src': "'none'",
  'style-src': "'unsafe-inline'",
  'img-src': "'self' data:",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
  'base-uri': "'none'",
};

/**
 * The service's own pages (/verify, sign-in, the console, the landing page): not frameable, posting only to
 * themselves, and running script only with the page's nonce. `same-origin` referrers: with `no-referrer`, Chromium
 * sends `Origin: null` on our own form posts and the Origin check fails. `alsoPostsTo`: CSP sources a form's answer
 * may redirect to (form-action also governs the redirects after a post).
 */
export function servicePage(nonce?: string, alsoPostsTo: readonly string[] = []): PageOptions {
  const directives: Record<string, string> = { ...SERVICE_CSP };
  if (alsoPostsTo.length > 0) directives['form-action'] = `'self' ${alsoPostsTo.join(' ')}`;
  if (nonce !== undefined) directives['script-src'] = `'nonce-${nonce}'`;
  const csp = Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
  return { headers: { 'content-security-policy': csp, 'x-frame-options': 'DENY' }, referrerPolicy: 'same-origin' };
}
