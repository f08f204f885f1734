/** The public side of a drop: passcode unlocking (rate limited) and batched view counts. */
import type { Store } from '../storage/store.js';
import type { Capabilities } from './capability.js';
import { clientGroup } from './client-address.js';
import type { Clock } from './clock.js';
import { verifyPasscode } from './passcode.js';
import { hitWindows, type RateCounter } from './rate-counter.js';

const DAY_MS = 86_400_000;

export interface AttemptPolicy {
  /** Wrong passcodes allowed per window, per drop and client (docs/api.md 4.6: 10 per 15 minutes). */
  readonly maxAttempts: number;
  readonly windowMs: number;
  /** Wrong passcodes allowed per window per drop, from every client together (30 per 15 minutes). */
  readonly maxDropAttempts: number;
  /** Wrong passcodes allowed per UTC day per drop, from every client together (100). */
  readonly maxDropAttemptsPerDay: number;
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
 * Checks a passcode for a drop. Every attempt first reserves one slot in each attempt window atomically (so parallel
 * guesses cannot overrun a limit); a right passcode gives its slots back, so only wrong ones count.
 *
 * Three windows (docs/api.md 4.6): per client (an IPv4 address or an IPv6 /64, see client-address.ts), and per drop
 * over all clients, for 15 minutes and for the UTC day, so rotating addresses behind a proxy buys no more guesses.
 * The per-drop windows belong to the passcode's generation: a flood of wrong guesses can hold the gate shut for
 * visitors without a capability, and the owner reopens it by setting a new passcode (capabilities already granted
 * keep working, and the owner's token always opens the raw document).
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
  const { policy } = deps;
  const { keys, retryAfterSeconds } = await hitWindows(
    deps.counter,
    [
      { name: `p:${slug}:${clientGroup(client)}`, limit: policy.maxAttempts, windowMs: policy.windowMs },
      { name: `pd:${slug}:${stored.generation}`, limit: policy.maxDropAttempts, windowMs: policy.windowMs },
      { name: `pday:${slug}:${stored.generation}`, limit: policy.maxDropAttemptsPerDay, windowMs: DAY_MS },
    ],
    deps.clock.now(),
  );
  if (retryAfterSeconds !== undefined) return { kind: 'rate_limited', retryAfterSeconds };
  if (!(await verifyPasscode(passcode, stored.hash))) return { kind: 'wrong' };
  await Promise.all(keys.map((key) => deps.counter.releaseRateWindow(key)));
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
