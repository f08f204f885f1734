/**
 * The app as route modules see it, and what the service adds to Fastify's request and route config. Routes import
 * this file, never app.ts, so that the app that registers them is not part of their import graph.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Caller } from '../domain/accounts.js';
import type { IdempotencyKeyRef } from '../domain/store.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'owner': a valid bearer token is required (spec 5). */
    auth?: 'owner';
    /**
     * A bearer caller's write, counted toward the per-account write limits (docs/api.md 8) by http/write-budget.ts
     * before the body is read (or after the idempotency claim). Browser forms count theirs with `spendWrite()`.
     */
    write?: boolean;
    /** Takes an `Idempotency-Key` (http/idempotency.ts; docs/api.md, "Idempotency keys"). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    caller: Caller | null;
    /** SHA-256 of the raw body, taken only when the request carries an Idempotency-Key. */
    bodyDigest: string | null;
    /** The idempotency key this request claimed, until its answer is kept or the key given up. */
    idempotency: IdempotencyKeyRef | null;
    /**
     * Counts this request as a write of `accountId` (http/write-budget.ts): throws 429 when the account's window is
     * full; given back when the answer is a 429 of its own.
     */
    spendWrite: (accountId: string) => Promise<void>;
    /** Gives back the write this request spent (write-budget.ts's own state; null when none was spent). */
    writeRelease: (() => Promise<void>) | null;
  }
}

/** The app as route modules see it: typed request bodies from the TypeBox schemas. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
