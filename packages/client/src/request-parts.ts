/**
 * The SDK's small helpers: path segments, argument checks, the options of conditional and idempotent writes and the
 * headers they become, collectComments() options, and a pause that can be aborted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HtmlDropError } from './errors.js';
import type { CallOptions, RequestSpec } from './transport.js';

export function slugPath(slug: string): string {
  return encodeURIComponent(slug);
}

/** The longest wait one comment listing may ask the service for (docs/api.md, "Comments"). */
export const MAX_COMMENT_WAIT_SECONDS = 60;

export function commentPath(slug: string, id: string): string {
  return `/api/drops/${slugPath(slug)}/comments/${encodeURIComponent(id)}`;
}

/** /api/webhooks/<id> (docs/api.md, "Webhooks"). */
export function webhookPath(id: string): string {
  return `/api/webhooks/${encodeURIComponent(id)}`;
}

export function wholeNumber(n: number, what: string, max = Number.MAX_SAFE_INTEGER): string {
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new HtmlDropError(
      'usage',
      `${what} is a whole number from 0${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''} (got ${n}).`,
    );
  }
  return String(n);
}

/** Options of collectComments(). */
export interface CollectOptions extends CallOptions {
  /** Only comments created after this time (Unix ms); default 0, all. */
  readonly since?: number;
  /**
   * Seconds to wait in all, when nothing is new, for the first comment to arrive (any length: listings of at most
   * 60 s follow one another until it is spent). Default 0: answer at once.
   */
  readonly waitSeconds?: number;
}

/** Waits `ms`; `aborted` when the signal fires. */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal });
  } catch {
    throw new HtmlDropError('aborted', 'The request was aborted.');
  }
}

export function versionNumber(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new HtmlDropError('usage', `A version is a whole number from 1 (got ${n}).`);
  return String(n);
}

/** Options of a write that may be made conditional on the drop's latest version. */
export interface ConditionalOptions extends CallOptions {
  /**
   * Sent as `If-Match: "<n>"` (or `*`): the write happens only while the drop's latest_version is n; otherwise it
   * fails with `version_conflict` (412, nothing changed) and the error's `latestVersion` says the latest.
   */
  readonly ifMatch?: number | '*';
}

/** Options of createDrop and updateDrop: sent with an `Idempotency-Key`, retried safely with it. */
export interface IdempotentOptions extends CallOptions {
  /**
   * The `Idempotency-Key` (1-255 visible ASCII characters); default a new random one for this call. A repeat with the
   * same key and body within 24 h answers the first answer (`onResponse` tells `replayed`) and writes nothing; with
   * another body it fails with `idempotency_key_reused` (422).
   */
  readonly idempotencyKey?: string;
}

/** Options of updateDrop: conditional and idempotent. */
export interface UpdateOptions extends ConditionalOptions, IdempotentOptions {}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A fresh random Idempotency-Key. */
export function newIdempotencyKey(): string {
  return randomUUID();
}

/** The transport fields of a call: its signal and answer callback, If-Match, and (`idempotent`) an Idempotency-Key. */
export function callParts(
  options: ConditionalOptions & IdempotentOptions,
  idempotent: boolean,
): Pick<RequestSpec, 'signal' | 'onResponse' | 'headers' | 'idempotencyKey'> {
  const { ifMatch, idempotencyKey, signal, onResponse } = options;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw new HtmlDropError('usage', 'An idempotency key is 1 to 255 visible ASCII characters (no spaces).');
  }
  let headers: Record<string, string> | undefined;
  if (ifMatch !== undefined) headers = { 'if-match': ifMatch === '*' ? '*' : `"${versionNumber(ifMatch)}"` };
  return {
    signal,
    onResponse,
    ...(headers === undefined ? {} : { headers }),
    ...(idempotent ? { idempotencyKey: idempotencyKey ?? newIdempotencyKey() } : {}),
  };
}
