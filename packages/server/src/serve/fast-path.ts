/**
 * The hot path: a cached, open drop's raw document answered straight from node:http, before the framework's
 * routing, hooks and reply machinery (about 0.5x of a bare node:http server through them on this machine, see
 * bench/). It looks up the request URL exactly as it arrived, so a hit costs one Map lookup and no parsing; anything
 * else (a miss, a locked drop, any other spelling of the URL) falls through to the Fastify route, which parses,
 * loads and gates the document and then answers with the same writer, writeRawAnswer() in raw-answer.ts: one code
 * path sends every raw document, so both send the same bytes and headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContentOrigins } from '../domain/content-origin.js';
import { writeRawAnswer } from './raw-answer.js';
import type { RawCache } from './raw-cache.js';

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
