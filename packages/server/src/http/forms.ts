import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, isApiError } from '../errors.js';

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

/** The cap on the service's small forms (the passcode gate, /verify): a few fields, never a document. */
export const SMALL_FORM_BYTES = 8192;

/**
 * What a room shows when one of its forms is refused before its handler ran, or when its handler failed: the page
 * the person was on, again where that is possible, with the refusal's message, under the status of its code
 * (docs/api.md, "Forms"). Never the JSON error body: these are pages people read.
 */
export type FormRefusal = (request: FastifyRequest, reply: FastifyReply, error: ApiError) => Promise<FastifyReply>;

export interface FormPostOptions {
  /** The most bytes a form body may have; 413 body_too_large above it, before it is read. */
  readonly bodyLimit: number;
  /** The room's page for a refused form, and for anything else that fails in the room. */
  readonly refuse: FormRefusal;
}

/** Bytes as people read a limit: `64 KiB`, `1 MiB`. */
const limitText = (bytes: number) =>
  bytes >= 1_048_576 && bytes % 1_048_576 === 0 ? `${bytes / 1_048_576} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

/**
 * Anything thrown in a form room as the ApiError its page shows: the form's own refusals (not UTF-8, not a form,
 * too large) in words for people; anything unexpected is `internal`.
 */
export function formError(error: unknown, bodyLimit: number): ApiError {
  if (isApiError(error)) return error;
  const status = (error as FastifyError).statusCode ?? 500;
  if (status === 413) {
    return new ApiError('body_too_large', {
      message: `The form is larger than this page takes (at most ${limitText(bodyLimit)}), so nothing was changed.`,
      details: { max_bytes: bodyLimit },
    });
  }
  if (status >= 400 && status < 500) {
    return new ApiError('invalid_arg', { message: 'The form could not be read, so nothing was changed.' });
  }
  return new ApiError('internal', { cause: error });
}

/** A Fastify error handler that answers with the room's page (a route's own, or a room's for all its routes). */
export function formErrorHandler(bodyLimit: number, refuse: FormRefusal) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const apiError = formError(error, bodyLimit);
    if (apiError.status >= 500) request.log.error({ err: error, reqId: request.id }, 'request failed');
    return refuse(request, reply, apiError);
  };
}

const NOT_A_FORM = new ApiError('unsupported_media_type', {
  message:
    'The form arrived in a format this page does not read (it takes application/x-www-form-urlencoded, as its own form sends), so nothing was changed.',
});

/**
 * Makes an encapsulated context one of the service's HTML form rooms (/verify, the console, the passcode gate, the
 * viewer's comment form). The root context parses every body as JSON (docs/decisions/0011-json-bodies-regardless-of-content-type.md);
 * here only `application/x-www-form-urlencoded` is parsed, up to `bodyLimit` bytes, and any other body is 415
 * unsupported_media_type. Every refusal and failure in the context is answered by `refuse` as a page: a bad form is
 * never answered with a JSON error body. A POST without a body is no form: its handler sees no fields.
 */
export function acceptFormPosts(instance: FastifyInstance, options: FormPostOptions): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: options.bodyLimit },
    (_request, body, done) => {
      try {
        done(null, parseForm(body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  // Refused before a byte of it is read; Fastify closes the connection after the answer.
  instance.addContentTypeParser('*', (_request, _payload, done) => done(NOT_A_FORM, undefined));
  instance.setErrorHandler(formErrorHandler(options.bodyLimit, options.refuse));
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
