/** The public side of a drop: passcode unlocking (rate limited) and batched view counts with read receipts. */

import type { Capabilities } from './capability.js';
import { clientGroup } from './client-address.js';
import type { Clock } from './clock.js';
import { type EventSink, reportAccessRefused } from './events.js';
import { verifyPasscode } from './passcode.js';
import { hitWindows, type RateCounter } from './rate-counter.js';
import type { DropStore, ViewStore } from './store.js';
import type { ViewTally } from './types.js';
import type { ViewerHasher } from './viewer-id.js';

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
  readonly store: DropStore;
  readonly counter: RateCounter;
  readonly clock: Clock;
  readonly capabilities: Capabilities;
  readonly policy: AttemptPolicy;
  /** Where `access.refused` goes (domain/events.ts); none: nowhere. */
  readonly events?: EventSink;
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
  if (!(await verifyPasscode(passcode, stored.hash))) {
    const drop = deps.events === undefined ? undefined : await deps.store.findDrop(slug);
    if (drop !== undefined && deps.events !== undefined) {
      await reportAccessRefused(deps.events, drop, 'wrong_passcode', deps.clock.now());
    }
    return { kind: 'wrong' };
  }
  await Promise.all(keys.map((key) => deps.counter.releaseRateWindow(key)));
  return { kind: 'granted', ...deps.capabilities.issue(slug, stored.generation) };
}

/**
 * Counts viewer renders in memory and writes them in batches: view_count and the read receipts (docs/api.md 2.1 and
 * "Read receipts": they may lag by at most 5 s; docs/decisions/0017-coalesced-counters.md). Flushed periodically and
 * once more on shutdown, so nothing is lost on a graceful stop; a failed flush keeps its renders for the next one.
 */
export interface ViewCounter {
  /** One render of `version` of `slug` by `viewer` (a daily viewer hash, viewer-id.ts) at `at` (Unix ms). */
  record(slug: string, version: number, viewer: string, at: number): void;
  flush(): Promise<void>;
}

interface Tally {
  views: number;
  firstAt: number;
  lastAt: number;
  viewers: Set<string>;
}

/** Adds `tally` into `batch` under `slug` and `version`: views summed, times widened, viewers united. */
function addTally(batch: Map<string, Map<number, Tally>>, slug: string, version: number, tally: ViewTally): void {
  let versions = batch.get(slug);
  if (versions === undefined) {
    versions = new Map();
    batch.set(slug, versions);
  }
  const known = versions.get(version);
  if (known === undefined) {
    versions.set(version, { ...tally, viewers: new Set(tally.viewers) });
    return;
  }
  known.views += tally.views;
  known.firstAt = Math.min(known.firstAt, tally.firstAt);
  known.lastAt = Math.max(known.lastAt, tally.lastAt);
  for (const viewer of tally.viewers) known.viewers.add(viewer);
}

/** `flushed`: told the views each flush wrote, by slug (the `drop.viewed` events, domain/events.ts). */
export function createViewCounter(
  store: Pick<ViewStore, 'addViews'>,
  flushed: (views: ReadonlyMap<string, number>) => void = () => undefined,
): ViewCounter {
  let batch = new Map<string, Map<number, Tally>>();
  return {
    record(slug, version, viewer, at) {
      addTally(batch, slug, version, { views: 1, firstAt: at, lastAt: at, viewers: new Set([viewer]) });
    },
    async flush() {
      if (batch.size === 0) return;
      const sent = batch;
      batch = new Map();
      try {
        await store.addViews(sent);
      } catch (error) {
        for (const [slug, versions] of sent) {
          for (const [version, tally] of versions) addTally(batch, slug, version, tally);
        }
        throw error;
      }
      const views = new Map<string, number>();
      for (const [slug, versions] of sent) {
        let total = 0;
        for (const tally of versions.values()) total += tally.views;
        views.set(slug, total);
      }
      flushed(views);
    },
  };
}

/** What counting a viewer render takes: the counter, the viewer hasher and the clock. */
export interface RenderCountDeps {
  readonly views: ViewCounter;
  readonly viewerOf: ViewerHasher;
  readonly clock: Clock;
}

/**
 * Counts one GET render of the viewer page (docs/decisions/0017-coalesced-counters.md): `version` is the version
 * shown, `address` the client address as the service sees it (request.ip), `userAgent` "" when absent. Only the
 * viewer hash is kept, never the address or the user agent.
 */
export function countRender(
  deps: RenderCountDeps,
  slug: string,
  version: number,
  address: string,
  userAgent: string,
): void {
  const at = deps.clock.now();
  deps.views.record(slug, version, deps.viewerOf(address, userAgent, at), at);
}
