/**
 * The hot path: a cached, open drop's raw document answered straight from node:http, before the framework's
 * routing, hooks and reply machinery (about 0.5x of a bare node:http server through them on this machine, see
 * bench/). It looks up the request URL exactly as it arrived, so a hit costs one Map lookup and no parsing; anything
 * else (a miss, a locked drop, any other spelling of the URL) falls through to the Fastify route, which parses,
 * loads and gates the document and then answers with the same writer, writeRawAnswer(): one code path sends every
 * raw document, so both send the same bytes and headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContentOrigins } from '../domain/content-origin.js';
import { matchesEtag, pickVariant } from './raw.js';
import type { RawAnswers, RawCache } from './raw-cache.js';

const joinRepeated = (before: string | undefined, value: string) =>
  before === undefined ? value : `${before}, ${value}`;

/**
 * Writes the complete answer (200, 304 or a HEAD's headers) from answers the caller may serve: an open drop's, or
 * a locked one's after its capability or owner check, which must be its `private` answers.
 */
export function writeRawAnswer(
  request: IncomingMessage,
  response: ServerResponse,
  answers: RawAnswers,
  cacheControl?: string,
): void {
  if (answers.locked && answers.policy !== 'private') throw new Error('a locked drop is only ever answered privately');
  // The two request headers the answer depends on, read from the raw list: on the fast path nothing else needs
  // `request.headers`, which would build an object of every header. Repeated lines are joined with ", " as
  // node:http joins them.
  let acceptEncoding: string | undefined;
  let ifNoneMatch: string | undefined;
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 15 && name.toLowerCase() === 'accept-encoding') {
      acceptEncoding = joinRepeated(acceptEncoding, raw[i + 1] as string);
    } else if (name.length === 13 && name.toLowerCase() === 'if-none-match') {
      ifNoneMatch = joinRepeated(ifNoneMatch, raw[i + 1] as string);
    }
  }
  const chosen = pickVariant(answers, acceptEncoding);
  if (ifNoneMatch !== undefined && matchesEtag(answers, ifNoneMatch)) {
    response.writeHead(304, withCacheControl(chosen.notModifiedHeaders, cacheControl));
    response.end();
    return;
  }
  response.writeHead(200, withCacheControl(chosen.headers, cacheControl));
  response.end(request.method === 'HEAD' ? undefined : chosen.body);
}

/** The prepared header list, or a copy with another Cache-Control (an expiring drop's, computed per request). */
function withCacheControl(headers: readonly string[], cacheControl: string | undefined): string[] {
  if (cacheControl === undefined) return headers as string[];
  return headers.map((value, i) => (i % 2 === 1 && headers[i - 1] === 'cache-control' ? cacheControl : value));
}

/** Returns true when it answered the request. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The Host header from the raw list (usually its first line), without building `request.headers`. */
export function hostOf(request: IncomingMessage): string | undefined {
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') return raw[i + 1];
  }
  return undefined;
}

/**
 * The cache key of a request: its URL on the service's host; the content label followed by the URL on a drop's own
 * host (docs/api.md, "Each drop on its own origin"). A content host never reaches a `/p/` key, so it serves no other
 * drop's bytes; undefined (no fast answer) for a content-looking host with no valid label.
 */
function keyOf(request: IncomingMessage, content: ContentOrigins | undefined): string | undefined {
  const url = request.url as string;
  // Only origin-form targets: a content key (`<label>/…`) must never be reachable as a URL on the service's host.
  if (url.charCodeAt(0) !== 47) return undefined;
  if (content === undefined) return url;
  const label = content.classify(hostOf(request));
  if (label === undefined) return url;
  return label === null ? undefined : label + url;
}

export function createRawFastPath(cache: RawCache, content: ContentOrigins | undefined): FastPath {
  return (request, response) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    // The key as it arrived: only the canonical `/p/<slug>/raw[?v=<n>]` and a content host's `/[?v=<n>]` hit.
    const key = keyOf(request, content);
    if (key === undefined) return false;
    const answers = cache.answersFor(key);
    // Locked and expiring drops go to the route, which checks the capability or the time.
    if (answers === undefined || answers.locked || answers.expiresAt !== null) return false;
    writeRawAnswer(request, response, answers);
    return true;
  };
}
