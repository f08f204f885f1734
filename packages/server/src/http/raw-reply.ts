/**
 * What the two routes that answer a drop's document share (docs/api.md 4.6 and "Each drop on its own origin"): the
 * raw path `/p/<slug>/raw` and the drop's own content host. Both answer a loaded cache entry the same way: gone from
 * the expiry instant, a locked drop only for a capability or its owner's token, otherwise through the fast path's
 * writer, so every document goes out through one code path whoever answers it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { opensLockedDrop, type PublicViewDeps, type VisitorAccess } from '../domain/public-view.js';
import { writeRawAnswer } from '../serve/fast-path.js';
import { cachedAs, cappedCacheControl, type Surface } from '../serve/raw.js';
import { openPolicyOf, type RawEntry, type SurfaceAnswers } from '../serve/raw-cache.js';

/** Why a loaded document is not sent, or the answers to send it from. */
export type RawVerdict =
  | { readonly kind: 'expired' }
  | { readonly kind: 'locked' }
  | { readonly kind: 'send'; readonly answers: SurfaceAnswers; readonly entry: RawEntry };

export async function rawVerdict(
  view: PublicViewDeps,
  entry: RawEntry,
  answers: SurfaceAnswers,
  access: VisitorAccess,
): Promise<RawVerdict> {
  // docs/api.md, "Expiry": gone from the instant itself, whatever a cache or the purge has done yet.
  if (entry.expiresAt !== null && entry.expiresAt <= view.clock.now()) return { kind: 'expired' };
  if (entry.locked && !(await opensLockedDrop(view, entry, access))) return { kind: 'locked' };
  return { kind: 'send', answers, entry };
}

/** Sends the document of a `send` verdict: the private answers of a locked drop, the shared ones otherwise. */
export function sendRawDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  view: PublicViewDeps,
  { answers, entry }: Extract<RawVerdict, { kind: 'send' }>,
  version: number | undefined,
  surface: Surface,
): FastifyReply {
  const policy = entry.locked ? 'private' : openPolicyOf(version);
  const lifetime = cachedAs(surface, policy);
  const cacheControl =
    entry.expiresAt === null ? undefined : cappedCacheControl(lifetime, entry.expiresAt, view.clock.now());
  reply.hijack();
  try {
    writeRawAnswer(request.raw, reply.raw, answers[policy], cacheControl);
  } catch (error) {
    // Past the hijack Fastify's error handler no longer answers: log, and do not leave the client waiting.
    request.log.error({ err: error, reqId: request.id }, 'raw answer failed');
    if (reply.raw.headersSent) reply.raw.destroy();
    else reply.raw.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
  }
  return reply;
}
