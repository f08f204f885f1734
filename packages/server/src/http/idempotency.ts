/**
 * Idempotency keys over HTTP (docs/api.md, "Idempotency keys", after the IETF Idempotency-Key draft): on the routes
 * configured `idempotent` (POST /api/drops, PUT /api/drops/<slug>), a request with an `Idempotency-Key` claims the
 * key for its account before it runs. The first one runs and its success is kept for 24 hours; a repeat with the
 * same request gets the kept answer with `Idempotent-Replayed: true` and changes nothing; a repeat with another
 * request gets 422 idempotency_key_reused; a repeat while the first runs gets 409 request_in_progress. An error
 * answer is not kept: it changed nothing, so a retry runs again. Replays are not writes: for these requests the
 * write is spent here, after the claim, instead of right after authentication (write-budget.ts).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.js';
import type { IdempotencyKeyRef, IdempotencyStore } from '../domain/store.js';
import { ApiError } from '../errors.js';

/** How long a kept answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
const HEADER = 'idempotency-key';
/** 1 to 255 visible ASCII characters (no space, no control character). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** Whether this request takes part: an idempotent route, with the header. */
export const usesIdempotencyKey = (request: FastifyRequest): boolean =>
  request.routeOptions.config.idempotent === true && request.headers[HEADER] !== undefined;

/** Called by the body parser with the raw bytes: the body's digest, kept only when a key will need it. */
export function noteBodyDigest(request: FastifyRequest, body: Buffer): void {
  if (request.headers[HEADER] !== undefined) request.bodyDigest = createHash('sha256').update(body).digest('base64url');
}

function keyOf(request: FastifyRequest): string {
  const key = request.headers[HEADER];
  if (typeof key !== 'string' || !VALID_KEY.test(key)) {
    throw new ApiError('invalid_arg', {
      message: 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces or control characters).',
      details: { field: 'Idempotency-Key' },
    });
  }
  return key;
}

/** The request as the key remembers it: method, route and parameters, and the exact body bytes. */
const fingerprintOf = (request: FastifyRequest): string =>
  `${request.method} ${request.routeOptions.url} ${JSON.stringify(request.params)} ${request.bodyDigest ?? '-'}`;

export interface IdempotencyDeps {
  readonly store: IdempotencyStore;
  readonly clock: Clock;
  /** How long a running claim holds before it is taken to be abandoned (its instance stopped mid-request). */
  readonly leaseMs: number;
}

/**
 * Adds the claim (preHandler), the kept answer (onSend) and the give-up (onResponse) to the routes configured
 * `idempotent` only, so no other request pays for them. Call before the routes are registered.
 */
export function installIdempotency(app: FastifyInstance, deps: IdempotencyDeps): void {
  app.decorateRequest('bodyDigest', null);
  app.decorateRequest('idempotency', null);
  const claim = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers[HEADER] === undefined || request.caller === null) return;
    const ref: IdempotencyKeyRef = { accountId: request.caller.account.id, key: keyOf(request) };
    const now = deps.clock.now();
    const found = await deps.store.claimIdempotencyKey(ref, fingerprintOf(request), {
      now,
      leaseUntil: now + deps.leaseMs,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    });
    if (found.kind === 'reused')
      throw new ApiError('idempotency_key_reused', { details: { field: 'Idempotency-Key' } });
    if (found.kind === 'in_progress') throw new ApiError('request_in_progress', { retryAfterSeconds: 1 });
    if (found.kind === 'replay') return replay(reply, found.answer);
    request.idempotency = ref;
    try {
      await request.spendWrite(ref.accountId);
    } catch (error) {
      request.idempotency = null;
      await deps.store.releaseIdempotencyKey(ref);
      throw error;
    }
  };
  // Before the answer leaves: a retry that follows the answer finds it kept, never "in progress".
  const keep = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    await settle(deps, request, reply, payload);
    return payload;
  };
  // The answer never went through onSend (the client went away first): the key is given up.
  const giveUp = (request: FastifyRequest, reply: FastifyReply) => settle(deps, request, reply, undefined);
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claim];
    route.onSend = [...[route.onSend ?? []].flat(), keep];
    route.onResponse = [...[route.onResponse ?? []].flat(), giveUp];
  });
}

function replay(reply: FastifyReply, answer: { status: number; body: string; etag: string | null }) {
  if (answer.etag !== null) reply.header('etag', answer.etag);
  return reply
    .code(answer.status)
    .header('idempotent-replayed', 'true')
    .type('application/json; charset=utf-8')
    .send(answer.body);
}

/** Keeps a success, gives up the key otherwise; a failure here is logged, never turned into the answer. */
async function settle(deps: IdempotencyDeps, request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const ref = request.idempotency;
  if (ref === null) return;
  request.idempotency = null;
  const status = reply.statusCode;
  try {
    if (status >= 200 && status < 300 && typeof payload === 'string') {
      const etag = reply.getHeader('etag');
      await deps.store.completeIdempotencyKey(ref, {
        status,
        body: payload,
        etag: typeof etag === 'string' ? etag : null,
      });
    } else {
      await deps.store.releaseIdempotencyKey(ref);
    }
  } catch (error) {
    request.log.error({ err: error, reqId: request.id }, 'idempotency key not settled');
  }
}
