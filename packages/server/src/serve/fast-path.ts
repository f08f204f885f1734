/**
 * The hot path: a cached, open drop's raw document answered straight from node:http, before the framework's
 * routing, hooks and reply machinery (about 0.5x of a bare node:http server through them on this machine, see
 * bench/). Anything it does not fully recognise (a miss, a locked drop, an unusual query) falls through to the
 * Fastify route, which loads and gates the document and then answers with the same writer, writeRawEntry(): one
 * code path sends every raw document, so both send the same bytes and headers and V8 sees one shape of call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchesEtag, pickVariant } from './raw.js';
import type { CachePolicy, RawCache, RawEntry } from './raw-cache.js';

const SLUG_CHAR = /^[A-Za-z0-9_-]{1,64}$/;
const VERSION = /^v=([1-9]\d{0,9})$/;

const joinRepeated = (before: string | undefined, value: string) =>
  before === undefined ? value : `${before}, ${value}`;

/**
 * Writes the complete answer (200, 304 or a HEAD's headers) for an entry the caller may serve: an open drop, or a
 * locked one after its capability or owner check, which must be answered with the `private` policy.
 */
export function writeRawEntry(
  request: IncomingMessage,
  response: ServerResponse,
  entry: RawEntry,
  policy: CachePolicy,
): void {
  if (entry.locked && policy !== 'private') throw new Error('a locked drop is only ever answered privately');
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
  const chosen = pickVariant(entry, acceptEncoding);
  if (ifNoneMatch !== undefined && matchesEtag(entry, ifNoneMatch)) {
    response.writeHead(304, chosen.notModifiedHeaders[policy] as string[]);
    response.end();
    return;
  }
  response.writeHead(200, chosen.headers[policy] as string[]);
  response.end(request.method === 'HEAD' ? undefined : chosen.body);
}

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
    writeRawEntry(request, response, entry, version === undefined ? 'latest' : 'pinned');
    return true;
  };
}
