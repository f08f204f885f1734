/**
 * One way to answer an error (docs/api.md 7): anything thrown in a request becomes one ApiError, whose status comes
 * from the code catalogue (errors.ts); /p/ paths answer it as an HTML page (page-reply.ts), everything else as the nested JSON
 * body. Unknown paths get the JSON `not_found` or, for a browser outside /api/, the page-not-found page.
 */

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Limits } from '../config.js';
import { ApiError, isApiError } from '../errors.js';
import { prefersHtml } from './accept.js';
import { bearerChallenge, isMcpPath, MCP_CORS } from './bearer-challenge.js';
import { refusePage } from './page-reply.js';
import { failedPage, NOT_FOUND_PAGE, PAGE_NOT_FOUND_PAGE } from './pages/layout.js';
import { validationError } from './validation.js';

/**
 * Maps anything thrown during a request to the one ApiError the client sees. `bodyLimit` is the route's body cap:
 * the document routes' cap is the transport cap of docs/api.md 7 (413 html_too_large); any other is body_too_large.
 */
function toApiError(error: FastifyError | Error, limits: Limits, bodyLimit: number | undefined): ApiError {
  if (isApiError(error)) return error;
  const fastifyError = error as FastifyError & { validation?: Parameters<typeof validationError>[1] };
  if (fastifyError.validation !== undefined) {
    return validationError(fastifyError.validationContext, fastifyError.validation);
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 413 && bodyLimit !== undefined && bodyLimit < limits.maxBodyBytes) {
    return new ApiError('body_too_large', {
      message: `The request body is larger than this endpoint accepts (at most ${bodyLimit} bytes).`,
      details: { max_bytes: bodyLimit },
    });
  }
  if (status === 413) {
    // max_bytes stays the HTML's limit, as the spec's clients read it; max_body_bytes is the cap that was passed.
    const cap = bodyLimit === undefined ? '' : ` (at most ${bodyLimit} bytes)`;
    return new ApiError('html_too_large', {
      status: 413,
      message: `The request body is larger than the service accepts${cap}; the HTML may be at most ${limits.maxHtmlBytes} bytes.`,
      details: { max_bytes: limits.maxHtmlBytes, ...(bodyLimit === undefined ? {} : { max_body_bytes: bodyLimit }) },
    });
  }
  if (status === 404) return new ApiError('not_found');
  if (status >= 400 && status < 500) {
    return new ApiError(fastifyError.code?.startsWith('FST_ERR_CTP') ? 'invalid_json' : 'invalid_arg', {
      message: error.message,
    });
  }
  return new ApiError('internal', { cause: error });
}

/** Installs the error handler and the not-found handler on `app`. */
export function installErrorHandlers(app: FastifyInstance, limits: Limits, baseUrl: string): void {
  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, limits, request.routeOptions.bodyLimit);
    if (apiError.status >= 500) request.log.error({ err: error, reqId: request.id }, 'request failed');
    if (request.url.startsWith('/p/')) {
      // Public pages answer HTML, also when something fails.
      return refusePage(reply, apiError, failedPage(apiError));
    }
    if (apiError.status === 401) {
      reply.header('www-authenticate', bearerChallenge(baseUrl, request.url, apiError.code === 'invalid_token'));
      if (isMcpPath(request.url)) reply.headers(MCP_CORS);
    }
    if (apiError.retryAfterSeconds !== undefined) reply.header('retry-after', String(apiError.retryAfterSeconds));
    return reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
  });

  // An unknown path is answered before its body is read: 404 whatever the body (its type, encoding or size).
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return answerNotFound(request, reply);
  });
  app.setNotFoundHandler(answerNotFound);
}

/** The 404 of a path no route matches (docs/api.md 7 and "Browser paths"). */
function answerNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (request.url.startsWith('/p/')) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
  // docs/api.md "Browser paths": a browser gets a page; /api/ and every other client get JSON.
  if (!request.url.startsWith('/api/') && prefersHtml(request.headers.accept)) {
    return refusePage(reply, 'not_found', PAGE_NOT_FOUND_PAGE);
  }
  const error = new ApiError('not_found', { message: `No route ${request.method} ${request.url.split('?')[0]}.` });
  return reply.code(404).type('application/json; charset=utf-8').send(error.toBody());
}
