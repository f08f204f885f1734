import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Parses HTML form posts (application/x-www-form-urlencoded) in an encapsulated context. The root context parses
 * every body as JSON; only the service's own HTML forms (passcode gate, /verify) register this.
 */
export function acceptFormPosts(instance: FastifyInstance): void {
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 8192 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
}

/** A string field of a parsed form body, '' when absent. */
export function formField(body: unknown, name: string): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * Whether a form post was sent by a page of another site or by an opaque origin (cross-site request forgery), for
 * forms that need no session, such as the passcode gate.
 *
 * Browsers send Fetch Metadata: only `Sec-Fetch-Site: same-origin` (or `none`, typed by the user) is ours. A
 * sandboxed document, such as a drop served by this same host, has an opaque origin and is reported as
 * `cross-site`. Origin alone cannot tell, because our pages are `no-referrer` and Chromium then sends `Origin: null`
 * even on their own posts. Without Fetch Metadata (older browsers), a present, non-null Origin must be ours.
 * Clients that are not browsers send neither header, and cannot be made to post by another site.
 */
export function isForeignFormPost(headers: IncomingHttpHeaders, ownOrigin: string): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = headers.origin;
  return origin !== undefined && origin !== 'null' && origin !== ownOrigin;
}
