/** The public side of a drop: passcode unlocking (rate limited) and batched view counts. */
import type { Store } from '../storage/store.js';
import type { Capabilities } from './capability.js';
import type { Clock } from './clock.js';
import { verifyPasscode } from './passcode.js';
import { hitWindow, type RateCounter } from './rate-counter.js';

export interface AttemptPolicy {
  /** Wrong passcodes allowed per window, per drop and client address (docs/api.md 4.6: 10 per 15 minutes). */
  readonly maxAttempts: number;
  readonly windowMs: number;
}

export type UnlockResult =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'open' }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number }
  | { readonly kind: 'granted'; readonly token: string; readonly expiresAt: number };

export interface UnlockDeps {
  readonly store: Store;
  readonly counter: RateCounter;
  readonly clock: Clock;
  readonly capabilities: Capabilities;
  readonly policy: AttemptPolicy;
}

/**
 * Checks a passcode for a drop. Every attempt first reserves one slot of the attempt window atomically (so parallel
 * guesses cannot overrun the limit); a right passcode gives its slot back, so only wrong ones count.
 */
export async function unlockDrop(
  deps: UnlockDeps,
  slug: string,
  client: string,
  passcode: string,
): Promise<UnlockResult> {
  const stored = await deps.store.findPasscode(slug);
  if (stored === undefined) return { kind: 'not_found' };
  if (stored.hash === null) return { kind: 'open' };
  const { key, retryAfterSeconds } = await hitWindow(
    deps.counter,
    `p:${slug}:${client}`,
    deps.policy.maxAttempts,
    deps.policy.windowMs,
    deps.clock.now(),
  );
  if (retryAfterSeconds !== undefined) return { kind: 'rate_limited', retryAfterSeconds };
  if (!(await verifyPasscode(passcode, stored.hash))) return { kind: 'wrong' };
  await deps.counter.releaseRateWindow(key);
  return { kind: 'granted', ...deps.capabilities.issue(slug, stored.generation) };
}

/**
 * Counts viewer renders in memory and writes them in batches (docs/api.md 2.1: view_count may lag by at most 5 s; docs/decisions/0017-coalesced-counters.md).
 * Flushed periodically and once more on shutdown, so nothing is lost on a graceful stop.
 */
export interface ViewCounter {
  record(slug: string): void;
  flush(): Promise<void>;
}

export function createViewCounter(store: Store): ViewCounter {
  let counts = new Map<string, number>();
  return {
    record(slug) {
      counts.set(slug, (counts.get(slug) ?? 0) + 1);
    },
    async flush() {
      if (counts.size === 0) return;
      const batch = counts;
      counts = new Map();
      try {
        await store.addViews(batch);
      } catch (error) {
        for (const [slug, n] of batch) counts.set(slug, (counts.get(slug) ?? 0) + n);
        throw error;
      }
    },
  };
}
