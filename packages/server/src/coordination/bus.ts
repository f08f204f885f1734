/**
 * Cross-instance coordination: the invalidation bus tells every instance that a drop changed, so no instance keeps
 * serving a stale or newly locked document from its raw cache. Implementations: in-process (one instance), Redis
 * pub/sub (HTMLDROP_REDIS_URL), PostgreSQL LISTEN/NOTIFY (several instances on PostgreSQL without Redis).
 */
export interface InvalidationBus {
  /** Announces a change of `slug` to every instance (this one included). Call after the change is committed. */
  publish(slug: string): Promise<void>;
  /**
   * Receives announcements. `reset` is called when announcements may have been missed (a lost connection), so
   * the receiver must drop everything it cached.
   */
  subscribe(onChange: (slug: string) => void, reset: () => void): Promise<void>;
  close(): Promise<void>;
}

/** One instance: announcements go straight to the local subscriber. */
export function createLocalBus(): InvalidationBus {
  let listener: ((slug: string) => void) | undefined;
  return {
    async publish(slug) {
      listener?.(slug);
    },
    async subscribe(onChange) {
      listener = onChange;
    },
    async close() {
      listener = undefined;
    },
  };
}
