/**
 * Idempotency keys over HTTP (docs/api.md, "Idempotency keys", after the IETF Idempotency-Key draft): on the routes
 * configured `idempotent` (POST /api/drops, PUT /api/drops/<slug>), a request with an `Idempotency-Key` claims the
 * key for its account before it runs. The first one runs and its success is kept for 24 hours; a repeat with the
 * same request gets the kept answer with `Idempotent-Replayed: true` and changes nothing; a repeat with another
 * request gets 422 idempotency_key_reused; a repeat while the first runs gets 409 request_in_progress, with
 * `Retry-After` the seconds until the first one's claim would lapse. The claim is leased for IDEMPOTENCY_LEASE_MS and
 * renewed while the request runs, so a request cut off by a crash holds its key for at most that long. An error
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
/**
 * How long a running claim holds unless its request renews it (every quarter of it, while it runs): all that a
 * request cut off by a crash leaves behind, so a retry waits at most this long (docs/api.md, "Idempotency keys").
 */
export const IDEMPOTENCY_LEASE_MS = 10_000;
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
  /** How long a running claim holds unless renewed (IDEMPOTENCY_LEASE_MS). */
  readonly leaseMs: number;
  /** The longest a request renews its claim: past it, a request still running is taken to be stuck. */
  readonly maxRunMs: number;
}

/** The renewal timer of each running claim, stopped when its answer is kept or the key given up. */
const renewals = new WeakMap<FastifyRequest, NodeJS.Timeout>();

/**
 * Renews the request's claim every quarter of the lease while it runs, so that only a request whose instance
 * stopped lets its lease lapse. A failed renewal is logged; the claim then lapses as after a crash.
 */
function holdClaim(deps: IdempotencyDeps, request: FastifyRequest, ref: IdempotencyKeyRef, fingerprint: string) {
  const every = deps.leaseMs / 4;
  let left = Math.ceil(deps.maxRunMs / every);
  const timer = setInterval(() => {
    left -= 1;
    if (left < 0) return stopHolding(request);
    deps.store.renewIdempotencyKey(ref, fingerprint, deps.clock.now() + deps.leaseMs).then(
      (held) => {
        if (!held) stopHolding(request);
      },
      (error: unknown) => request.log.warn({ err: error, reqId: request.id }, 'idempotency claim not renewed'),
    );
  }, every);
  timer.unref();
  renewals.set(request, timer);
}

function stopHolding(request: FastifyRequest): void {
  clearInterval(renewals.get(request));
  renewals.delete(request);
}

/** Whole seconds (at least 1) until a running claim's lease lapses: when a retry may find it free. */
const secondsUntil = (leaseUntil: number, now: number) => Math.max(1, Math.ceil((leaseUntil - now) / 1000));

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
    const fingerprint = fingerprintOf(request);
    const now = deps.clock.now();
    const found = await deps.store.claimIdempotencyKey(ref, fingerprint, {
      now,
      leaseUntil: now + deps.leaseMs,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    });
    if (found.kind === 'reused')
      throw new ApiError('idempotency_key_reused', { details: { field: 'Idempotency-Key' } });
    if (found.kind === 'in_progress') {
      throw new ApiError('request_in_progress', { retryAfterSeconds: secondsUntil(found.leaseUntil, now) });
    }
    if (found.kind === 'replay') return replay(reply, found.answer);
    request.idempotency = ref;
    holdClaim(deps, request, ref, fingerprint);
    try {
      await request.spendWrite(ref.accountId);
    } catch (error) {
      request.idempotency = null;
      stopHolding(request);
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
  stopHolding(request);
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
