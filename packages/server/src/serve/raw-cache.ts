/**
 * Bounded in-memory LRU of ready-to-send raw documents, so /p/<slug>/raw does no per-request work that can be done
 * once per version. Invalidated per slug on every change (PUT, version delete, passcode change, drop delete).
 * A change counter guards against a slow loader putting back a document that was invalidated while it loaded.
 */

/** How a response may be cached: the latest version, a pinned `?v=<n>`, or a gated (private) answer. */
export type CachePolicy = 'latest' | 'pinned' | 'private';

/** One encoding of a served version, with its response headers computed once per cache policy. */
export interface RawVariant {
  readonly body: Buffer;
  readonly etag: string;
  readonly encoding: 'gzip' | 'br' | undefined;
  /** Flat [name, value, ...] header lists for a 200, per policy (node:http writeHead takes them as they are). */
  readonly headers: Readonly<Record<CachePolicy, readonly string[]>>;
  /** The same for a 304 (no body headers). */
  readonly notModifiedHeaders: Readonly<Record<CachePolicy, readonly string[]>>;
}

/** The bytes of one served version, in every encoding, with what gating needs. */
export interface RawEntry {
  readonly slug: string;
  readonly version: number;
  readonly latestVersion: number;
  readonly locked: boolean;
  readonly passcodeGeneration: number;
  /** The stored HTML with the spec 4.6 additions, UTF-8. */
  readonly identity: RawVariant;
  readonly gzip: RawVariant | undefined;
  readonly brotli: RawVariant | undefined;
  /** Memory held by all variants. */
  readonly bytes: number;
}

export interface RawCache {
  /** `version` undefined means the latest version. */
  get(slug: string, version: number | undefined): RawEntry | undefined;
  /** A stamp to take before loading `slug` and pass back to `set`, so a load overtaken by a change is dropped. */
  generation(slug: string): number;
  set(entry: RawEntry, requested: number | undefined, generation: number): void;
  invalidate(slug: string): void;
  /** Drops everything (announcements of changes may have been missed). */
  clear(): void;
  readonly size: number;
}

export interface RawCacheOptions {
  /** Total body bytes kept (default 256 MiB). */
  readonly maxBytes?: number;
  readonly maxEntries?: number;
}

interface Slot {
  readonly entry: RawEntry;
  used: boolean;
}

const keyOf = (slug: string, version: number | undefined) =>
  version === undefined ? `${slug}@latest` : `${slug}@${version}`;

export function createRawCache(options: RawCacheOptions = {}): RawCache {
  const maxBytes = options.maxBytes ?? 256 * 1_048_576;
  const maxEntries = options.maxEntries ?? 50_000;
  // Second-chance (CLOCK) replacement: a hit only sets a flag; eviction walks from the oldest insertion and gives
  // flagged entries another round. Cheaper per hit than moving the key to the end of the Map.
  const entries = new Map<string, Slot>();
  const keysBySlug = new Map<string, Set<string>>();
  // Change counter: every invalidation ticks it. A load stamped before a later change of its slug (or before a
  // clear) is not stored. `floor` covers changes whose per-slug stamps were pruned.
  let tick = 0;
  let floor = 0;
  const changedAt = new Map<string, number>();
  let bytes = 0;

  function remove(key: string): void {
    const slot = entries.get(key);
    if (slot === undefined) return;
    const entry = slot.entry;
    entries.delete(key);
    bytes -= entry.bytes;
    const keys = keysBySlug.get(entry.slug);
    keys?.delete(key);
    if (keys?.size === 0) keysBySlug.delete(entry.slug);
  }

  function evict(): void {
    // Each flagged entry is moved to the end at most once per pass, so this ends.
    let budget = entries.size;
    while ((bytes > maxBytes || entries.size > maxEntries) && entries.size > 0) {
      const [key, slot] = entries.entries().next().value as [string, Slot];
      if (slot.used && budget-- > 0) {
        slot.used = false;
        entries.delete(key);
        entries.set(key, slot);
      } else {
        remove(key);
      }
    }
  }

  return {
    get(slug, version) {
      const slot = entries.get(keyOf(slug, version));
      if (slot === undefined) return undefined;
      slot.used = true;
      return slot.entry;
    },
    generation: () => tick,
    set(entry, requested, stamp) {
      if (stamp < floor || (changedAt.get(entry.slug) ?? 0) > stamp || entry.bytes > maxBytes) return;
      const key = keyOf(entry.slug, requested);
      remove(key);
      entries.set(key, { entry, used: false });
      bytes += entry.bytes;
      const keys = keysBySlug.get(entry.slug) ?? new Set<string>();
      keysBySlug.set(entry.slug, keys);
      keys.add(key);
      evict();
    },
    invalidate(slug) {
      tick++;
      changedAt.set(slug, tick);
      if (changedAt.size > 10_000) {
        changedAt.clear();
        floor = tick;
      }
      for (const key of [...(keysBySlug.get(slug) ?? [])]) remove(key);
    },
    clear() {
      tick++;
      floor = tick;
      changedAt.clear();
      for (const key of [...entries.keys()]) remove(key);
    },
    get size() {
      return entries.size;
    },
  };
}
