/**
 * The refusals that happen before routing, answered in the service's shapes (docs/api.md 7 and "Browser paths")
 * instead of the framework's: a URL the router cannot decode or whose parameter is too long, and a request the HTTP
 * parser refuses (malformed, headers too large, too slow). The nested JSON error under /api/ and for clients; an
 * HTML page for a browser; /p/ paths answer the drop 404 page, as every bad slug there does.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { prefersHtml } from './accept.js';
import { escapeHtml, NOT_FOUND_PAGE, PAGE_NOT_FOUND_PAGE, simplePage } from './pages/layout.js';

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

/** The answer for a path the router refused (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH). */
function refusedPath(path: string, accept: string | undefined): { status: number; page?: string; error?: ApiError } {
  if (path.startsWith('/p/')) return { status: 404, page: NOT_FOUND_PAGE };
  // docs/api.md, "Identifiers": a path slug that is not valid is 400 invalid_slug; a token id, 400 invalid_arg.
  if (/^\/api\/(drops|prototypes)\//.test(path)) return { status: 400, error: new ApiError('invalid_slug') };
  if (path.startsWith('/api/tokens/')) {
    return { status: 400, error: new ApiError('invalid_arg', { details: { field: 'id' } }) };
  }
  if (!path.startsWith('/api/') && prefersHtml(accept)) return { status: 404, page: PAGE_NOT_FOUND_PAGE };
  return { status: 404, error: new ApiError('not_found', { message: 'No such path.' }) };
}

/** Fastify's `frameworkErrors` option: the router's refusals, before any hook ran. */
export function answerFrameworkError(_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = (request.raw.url ?? '/').split('?')[0] ?? '/';
  const answer = refusedPath(path, request.headers.accept);
  reply.code(answer.status).header('x-request-id', request.id);
  if (answer.page !== undefined) {
    reply.headers(PAGE_HEADERS).send(answer.page);
    return;
  }
  reply.header('cache-control', 'no-store').type('application/json; charset=utf-8').send(answer.error?.toBody());
}

/** The answer to a request that arrives on a kept-alive connection while the instance shuts down. */
const SHUTTING_DOWN = (() => {
  const body = JSON.stringify(new ApiError('shutting_down', { retryAfterSeconds: 1 }).toBody());
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      'retry-after': '1',
      connection: 'close',
    },
  };
})();

/** Answers 503 shutting_down (instead of the framework's own 503 body) and closes the connection. */
export function answerShuttingDown(response: http.ServerResponse): void {
  response.writeHead(503, SHUTTING_DOWN.headers).end(SHUTTING_DOWN.body);
}

/** Path and Accept header of the request a parser error came with, as far as its bytes were received. */
function requestLineOf(rawPacket: Buffer | undefined): { path: string; accept: string | undefined } {
  const text = rawPacket?.toString('latin1') ?? '';
  const path = /^[A-Z]+ (\S+)/.exec(text)?.[1] ?? '';
  const accept = /\r\naccept:[ \t]*([^\r\n]*)/i.exec(text)?.[1];
  return { path, accept };
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request. The connection is closed after the answer,
 * as Node does; a reset connection gets nothing.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout')
        : new ApiError('bad_request');
  const { path, accept } = requestLineOf(Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined);
  const page = path !== '' && !path.startsWith('/api/') && prefersHtml(accept);
  const body = page
    ? simplePage(http.STATUS_CODES[apiError.status] ?? 'Error', `<p>${escapeHtml(apiError.message)}</p>`)
    : JSON.stringify(apiError.toBody());
  const type = page ? PAGE_HEADERS['content-type'] : 'application/json; charset=utf-8';
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.status} ${http.STATUS_CODES[apiError.status]}\r\nContent-Type: ${type}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
