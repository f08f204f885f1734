/**
 * A drop's document as an answer, chosen and written in one place (docs/api.md 4.6 and "Each drop on its own
 * origin"). The raw path `/p/<slug>/raw` and the drop's own content host answer a loaded cache entry the same way:
 * gone from the expiry instant, a locked drop only for a capability or its owner's token, otherwise written by
 * writeRawAnswer(), the writer the fast path (fast-path.ts) uses for its hits too, so every document goes out through
 * one code path whoever answers it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Admitted, decideAccess, type PublicViewDeps, type VisitorAccess } from '../domain/public-view.js';
import type { AccessWho, RefusalReason } from '../domain/store.js';
import { writePreparedHead } from './prepared-head.js';
import { cachedAs, cappedCacheControl, matchesEtag, pickVariant, type Surface } from './raw.js';
import {
  isGated,
  openPolicyOf,
  type RawAnswer,
  type RawAnswers,
  type RawEntry,
  type SurfaceAnswers,
} from './raw-cache.js';

/** Why a loaded document is not sent, or the answers to send it from. */
export type RawVerdict =
  | { readonly kind: 'expired' }
  | { readonly kind: 'locked' }
  /** Not for this visitor (docs/api.md, "Who can see a drop"): 401 or 403, nothing of the drop. */
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly who: AccessWho }
  | {
      readonly kind: 'send';
      readonly answers: SurfaceAnswers;
      readonly entry: RawEntry;
      readonly admitted?: Admitted;
    };

/**
 * Whether a loaded document opens for this visitor (decideAccess() in domain/public-view.ts, the one decision): an
 * open public drop always; otherwise as decided for this request, never from what a cache kept.
 */
export async function rawVerdict(
  view: PublicViewDeps,
  entry: RawEntry,
  answers: SurfaceAnswers,
  access: VisitorAccess,
): Promise<RawVerdict> {
  // docs/api.md, "Expiry": gone from the instant itself, whatever a cache or the purge has done yet.
  if (entry.expiresAt !== null && entry.expiresAt <= view.clock.now()) return { kind: 'expired' };
  // A public, open drop is everyone's: nothing to decide (the fast path answers these without asking).
  if (!isGated(entry)) return { kind: 'send', answers, entry };
  const decision = await decideAccess(view, entry, access, entry.version);
  if (decision.kind !== 'open') return decision.kind === 'locked' ? { kind: 'locked' } : decision;
  return { kind: 'send', answers, entry, admitted: decision };
}

/**
 * Sends the document of a `send` verdict on a response its caller has taken over (Fastify's `reply.hijack()`): the
 * private answers of a locked drop, the shared ones otherwise. A failure is reported and never leaves the client
 * waiting.
 */
export function sendRawDocument(
  request: IncomingMessage,
  response: ServerResponse,
  { answers, entry }: Extract<RawVerdict, { kind: 'send' }>,
  target: { readonly version: number | undefined; readonly surface: Surface; readonly now: number },
  report: (error: unknown) => void,
): void {
  const policy = isGated(entry) ? 'private' : openPolicyOf(target.version);
  const lifetime = cachedAs(target.surface, policy);
  const cacheControl = entry.expiresAt === null ? undefined : cappedCacheControl(lifetime, entry.expiresAt, target.now);
  try {
    writeRawAnswer(request, response, answers[policy], cacheControl);
  } catch (error) {
    report(error);
    if (response.headersSent) response.destroy();
    else response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
  }
}

const joinRepeated = (before: string | undefined, value: string) =>
  before === undefined ? value : `${before}, ${value}`;

/**
 * Writes the complete answer (200, 304, a file's 206 or 416, or a HEAD's headers) from answers the caller may serve:
 * an open drop's, or a locked one's after its capability or owner check, which must be its `private` answers.
 */
export function writeRawAnswer(
  request: IncomingMessage,
  response: ServerResponse,
  answers: RawAnswers,
  cacheControl?: string,
): void {
  if (answers.locked && answers.policy !== 'private') throw new Error('a locked drop is only ever answered privately');
  // The request headers the answer depends on, read from the raw list: on the fast path nothing else needs
  // `request.headers`, which would build an object of every header. Repeated lines are joined with ", " as
  // node:http joins them.
  let acceptEncoding: string | undefined;
  let ifNoneMatch: string | undefined;
  let range: string | undefined;
  let ifRange: string | undefined;
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 15 && name.toLowerCase() === 'accept-encoding') {
      acceptEncoding = joinRepeated(acceptEncoding, raw[i + 1] as string);
    } else if (name.length === 13 && name.toLowerCase() === 'if-none-match') {
      ifNoneMatch = joinRepeated(ifNoneMatch, raw[i + 1] as string);
    } else if (name.length === 5 && name.toLowerCase() === 'range') {
      range = raw[i + 1];
    } else if (name.length === 8 && name.toLowerCase() === 'if-range') {
      ifRange = raw[i + 1];
    }
  }
  const chosen = pickVariant(answers, acceptEncoding);
  if (ifNoneMatch !== undefined && matchesEtag(answers, ifNoneMatch)) {
    response.writeHead(304, withCacheControl(chosen.notModifiedHeaders, cacheControl));
    response.end();
    return;
  }
  // RFC 9110 13.1.5: a Range under an If-Range naming another representation is answered whole.
  if (range !== undefined && answers.ranges === true && (ifRange === undefined || ifRange === answers.identity.etag)) {
    if (writeRange(request, response, answers.identity, range, cacheControl)) return;
  }
  // The head as prepared when the answer was built (prepared-head.ts); writeHead when it cannot be used.
  if (cacheControl !== undefined || !writePreparedHead(response, chosen.head)) {
    response.writeHead(200, withCacheControl(chosen.headers, cacheControl));
  }
  response.end(request.method === 'HEAD' ? undefined : chosen.body);
}

/**
 * One byte range of a file (RFC 9110 14.1.2): `first-last`, `first-`, or `-suffix`. Undefined for a header this
 * service answers whole: not `bytes=`, malformed, or several ranges (a server may ignore Range, RFC 9110 14.2).
 * `null` when the range cannot be satisfied.
 */
export function parseRange(header: string, size: number): { start: number; end: number } | null | undefined {
  const match = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/.exec(header);
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    return suffix === 0 || size === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  return start >= size ? null : { start, end };
}

/** A 206 with one range of the identity body, or a 416; false when the Range is to be ignored (a 200 follows). */
function writeRange(
  request: IncomingMessage,
  response: ServerResponse,
  identity: RawAnswer,
  header: string,
  cacheControl: string | undefined,
): boolean {
  const size = identity.body.length;
  const range = parseRange(header, size);
  if (range === undefined) return false;
  if (range === null) {
    response.writeHead(416, ['content-range', `bytes */${size}`, 'content-length', '0', ...UNSATISFIED]);
    response.end();
    return true;
  }
  const length = range.end - range.start + 1;
  const headers = withCacheControl(identity.headers, cacheControl).map((value, i, all) =>
    i % 2 === 1 && all[i - 1] === 'content-length' ? String(length) : value,
  );
  headers.push('content-range', `bytes ${range.start}-${range.end}/${size}`);
  response.writeHead(206, headers);
  response.end(request.method === 'HEAD' ? undefined : identity.body.subarray(range.start, range.end + 1));
  return true;
}

/** The headers of a 416 besides its Content-Range: no body to sniff, nothing to keep. */
const UNSATISFIED = ['x-content-type-options', 'nosniff', 'cache-control', 'no-store'];

/** The prepared header list, or a copy with another Cache-Control (an expiring drop's, computed per request). */
function withCacheControl(headers: readonly string[], cacheControl: string | undefined): string[] {
  if (cacheControl === undefined) return headers as string[];
  return headers.map((value, i) => (i % 2 === 1 && headers[i - 1] === 'cache-control' ? cacheControl : value));
}
