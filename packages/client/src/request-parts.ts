/** The SDK's small helpers: path segments, argument checks, collectComments() options, and a pause that can be aborted. */
import { setTimeout as sleep } from 'node:timers/promises';
import { HtmlDropError } from './errors.js';
import type { CallOptions } from './transport.js';

export function slugPath(slug: string): string {
  return encodeURIComponent(slug);
}

/** The longest wait one comment listing may ask the service for (docs/api.md, "Comments"). */
export const MAX_COMMENT_WAIT_SECONDS = 60;

export function commentPath(slug: string, id: string): string {
  return `/api/drops/${slugPath(slug)}/comments/${encodeURIComponent(id)}`;
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
