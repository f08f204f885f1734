import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * Decodes an `application/x-www-form-urlencoded` body exactly: invalid UTF-8, raw or percent-encoded (`%FF`), is
 * refused rather than turned into U+FFFD (which would let a passcode set with one byte be opened by another).
 */
export function parseForm(bytes: Buffer): Record<string, string> {
  const refuse = () =>
    new ApiError('invalid_arg', { message: 'The form is not valid UTF-8.', details: { field: 'body' } });
  if (!isUtf8(bytes)) throw refuse();
  const fields: Record<string, string> = {};
  for (const pair of bytes.toString('utf8').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const [name, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    try {
      // decodeURIComponent throws on percent-encoded bytes that are not UTF-8, where URLSearchParams substitutes.
      const key = decodeURIComponent(name.replaceAll('+', ' '));
      if (key !== '__proto__') fields[key] = decodeURIComponent(value.replaceAll('+', ' '));
    } catch {
      throw refuse();
    }
  }
  return fields;
}

/**
 * Parses HTML form posts (application/x-www-form-urlencoded) in an encapsulated context. The root context parses
 * every body as JSON; only the service's own HTML forms (passcode gate, /verify) register this.
 */
export function acceptFormPosts(instance: FastifyInstance): void {
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: 8192 },
    (_request, body, done) => {
      try {
        done(null, parseForm(body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
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
