/**
 * Cross-instance coordination: the invalidation bus tells every instance that a drop changed, so no instance keeps
 * serving a stale or newly locked document from its raw cache. Implementations: in-process (one instance), Redis
 * pub/sub (HTMLDROP_REDIS_URL), PostgreSQL LISTEN/NOTIFY (several instances on PostgreSQL without Redis).
 *
 * A bus can lose its subscription (the connection to Redis or PostgreSQL drops). It then reports it (`onStatus`),
 * reconnects with backoff until it succeeds, and on success tells the receiver to `reset`, since announcements sent
 * meanwhile are lost. While it is down, the receiver must not trust its cache for long (docs/architecture.md,
 * "When the bus is down").
 */
export interface BusReceiver {
  /** `slug` changed on some instance. */
  onChange(slug: string): void;
  /** Announcements may have been missed: drop everything cached. */
  reset(): void;
  /** The subscription was lost (`error` says why; called again for each failed reconnect) or is back. */
  onStatus?(subscribed: boolean, error?: unknown): void;
}

export interface InvalidationBus {
  /** Announces a change of `slug` to every instance (this one included). Call after the change is committed. */
  publish(slug: string): Promise<void>;
  /** Starts receiving announcements; resolves once subscribed (the first connection must succeed). */
  subscribe(receiver: BusReceiver): Promise<void>;
  /** Whether announcements are being received now (readiness). */
  readonly subscribed: boolean;
  close(): Promise<void>;
}

/** One instance: announcements go straight to the local subscriber, which can never miss one. */
export function createLocalBus(): InvalidationBus {
  let receiver: BusReceiver | undefined;
  return {
    async publish(slug) {
      receiver?.onChange(slug);
    },
    async subscribe(given) {
      receiver = given;
    },
    subscribed: true,
    async close() {
      receiver = undefined;
    },
  };
}

/** Reconnection delays: 0.5 s doubling to at most 30 s, with a little jitter so instances do not retry in step. */
export function backoffDelay(attempt: number): number {
  const base = Math.min(30_000, 500 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
