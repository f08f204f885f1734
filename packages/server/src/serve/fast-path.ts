/**
 * The hot path: a cached, open drop's raw document answered straight from node:http, before the framework's
 * routing, hooks and reply machinery (about 0.5x of a bare node:http server through them on this machine, see
 * bench/). Anything it does not fully recognise (a miss, a locked drop, an unusual query) falls through to the
 * Fastify route, which shares rawResponse() with it, so both writers send the same bytes and headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rawResponse } from './raw.js';
import type { RawCache } from './raw-cache.js';

const SLUG_CHAR = /^[A-Za-z0-9_-]{1,64}$/;
const VERSION = /^v=([1-9]\d{0,9})$/;

/** Returns true when it answered the request. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

export function createRawFastPath(cache: RawCache): FastPath {
  return (request, response) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = request.url;
    if (url === undefined || !url.startsWith('/p/')) return false;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (!path.endsWith('/raw')) return false;
    const slug = path.slice(3, -4);
    if (!SLUG_CHAR.test(slug)) return false;
    let version: number | undefined;
    if (query !== -1) {
      const match = VERSION.exec(url.slice(query + 1));
      if (match === null) return false;
      version = Number(match[1]);
    }
    const entry = cache.get(slug, version);
    if (entry === undefined || entry.locked) return false;
    const answer = rawResponse(
      entry,
      {
        method,
        acceptEncoding: request.headers['accept-encoding'],
        ifNoneMatch: request.headers['if-none-match'],
      },
      version === undefined ? 'latest' : 'pinned',
    );
    response.writeHead(answer.status, answer.headers as string[]);
    response.end(answer.body);
    return true;
  };
}
