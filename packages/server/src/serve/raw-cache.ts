import type { Visibility } from '../domain/types.js';
import type { PreparedHead } from './prepared-head.js';

/**
 * Bounded in-memory LRU of ready-to-send raw documents and files (docs/api.md, "Many files in one drop"), so
 * /p/<slug>/raw, a drop's own origin and their files do no per-request work that can be done once per version.
 * Invalidated per slug on every change (PUT, version delete, passcode change, drop delete). A change counter guards
 * against a slow loader putting back a document that was invalidated while it loaded.
 */

/** How a response may be cached: the latest version, a pinned `?v=<n>`, or a gated (private) answer. */
export type CachePolicy = 'latest' | 'pinned' | 'private';

/**
 * One encoding of a served version under one cache policy: exactly what `writeHead` and `end` take, so a request
 * reads a handful of fields and builds nothing.
 */
export interface RawAnswer {
  readonly body: Buffer;
  readonly etag: string;
  readonly encoding: 'gzip' | 'br' | undefined;
  /** Flat [name, value, ...] header list for a 200 (node:http writeHead takes it as it is). */
  readonly headers: readonly string[];
  /** The same 200's head as checked, joined text (prepared-head.ts): what the fast path hands node:http. */
  readonly head: PreparedHead;
  /** The same for a 304 (no body headers). */
  readonly notModifiedHeaders: readonly string[];
}

/** Every encoding of a version under one cache policy, with the lock state the writer guards on. */
export interface RawAnswers {
  readonly policy: CachePolicy;
  /**
   * Gated: a passcode, or a visibility other than `public` (docs/api.md, "Who can see a drop"). Gated answers are
   * never sent by the fast path and only ever privately: the route decides for each request.
   */
  readonly locked: boolean;
  /**
   * The drop's expiry (Unix ms), or null. An expiring drop's answers are never sent by the fast path: the route
   * checks the time and caps the cache lifetime at the time left (docs/api.md, "Expiry").
   */
  readonly expiresAt: number | null;
  readonly identity: RawAnswer;
  readonly gzip: RawAnswer | undefined;
  readonly brotli: RawAnswer | undefined;
  /**
   * A file's answers serve byte ranges (RFC 9110 14: 206, 416) from the identity body; a document's never do, so a
   * document is answered exactly as before.
   */
  readonly ranges?: boolean;
}

/** One surface's answers under each cache policy (the bodies are shared). */
export type SurfaceAnswers = Readonly<Record<CachePolicy, RawAnswers>>;

/** The bytes of one served version's document or file, in every encoding, with what gating needs. */
export interface RawEntry {
  readonly slug: string;
  /** The owning account: its bearer token opens a locked drop's raw document. */
  readonly accountId: string;
  readonly version: number;
  readonly latestVersion: number;
  readonly locked: boolean;
  readonly passcodeGeneration: number;
  readonly expiresAt: number | null;
  /** Who can see the drop (docs/api.md, "Who can see a drop"); decided per request when not `public`. */
  readonly visibility: Visibility;
  readonly allow: readonly string[];
  /** The `{id}` of the drop's own origin. */
  readonly contentLabel: string | null;
  /** The raw path's answers under each cache policy. */
  readonly answers: SurfaceAnswers;
  /** The drop's own origin's answers; undefined when no content origin is configured. */
  readonly contentAnswers: SurfaceAnswers | undefined;
  /** Memory held by the bodies of every encoding. */
  readonly bytes: number;
}

/**
 * A drop as a request names it: by slug on the raw path, by content label on its own origin (docs/api.md, "Each
 * drop on its own origin"). Each is cached under its own key, with that surface's answers.
 */
export type DropRef = { readonly slug: string } | { readonly label: string };

export interface RawCache {
  /**
   * `version` undefined means the latest version. `path` names what the URL asked for in a version's folder
   * (docs/api.md, "Many files in one drop"): absent, the document as `?v=<n>` names it; `''`, the document as
   * `/v/<n>/` names it; otherwise a file.
   */
  get(ref: DropRef, version: number | undefined, path?: string): RawEntry | undefined;
  /**
   * The fast path's lookup: the open or locked answers cached for a key exactly as the request gave it: a raw URL
   * (`/p/<slug>/raw` for policy `latest`, `/p/<slug>/raw?v=<n>` and `/p/<slug>/raw/v/<n>/[<path>]` for `pinned`),
   * or a content label followed by the URL (`<label>/`, `<label>/?v=<n>`, `<label>/v/<n>/[<path>]`, and
   * `<label>/<path>` for the latest version's file). No parsing; any other spelling misses and goes to the route.
   */
  answersFor(key: string): RawAnswers | undefined;
  /** A stamp to take before loading a drop and pass back to `set`, so a load overtaken by a change is dropped. */
  generation(): number;
  /** Keeps `entry` under the key of `ref` (its surface), `requested` and `path` (as for `get`). */
  set(entry: RawEntry, ref: DropRef, requested: number | undefined, generation: number, path?: string): void;
  invalidate(slug: string): void;
  /** Drops everything (announcements of changes may have been missed). */
  clear(): void;
  /**
   * While announcements of changes cannot arrive (the bus is down), entries older than `maxAgeMs` are treated as
   * missing, so a document changed on another instance is served from the database after at most that long.
   * `undefined` trusts the cache again (call `clear` first: announcements were missed meanwhile).
   */
  limitAge(maxAgeMs: number | undefined): void;
  readonly size: number;
}

export interface RawCacheOptions {
  /** Total body bytes kept (default 256 MiB). */
  readonly maxBytes?: number;
  /**
   * A file's entry above this many bytes (all encodings) is not kept, so one large file cannot push out the hot set:
   * it is read again for each request (default an eighth of maxBytes). Documents are kept up to maxBytes.
   */
  readonly maxFileEntryBytes?: number;
  readonly maxEntries?: number;
  /** Milliseconds since the epoch; read only while the cache's age is limited. */
  readonly now?: () => number;
}

/**
 * A cached entry, carrying a copy of its answers under the policy its key implies: the fast path gets the slot
 * itself as those answers, one object fewer to read per request (each is a likely cache miss under load).
 */
interface Slot extends RawAnswers {
  readonly entry: RawEntry;
  used: boolean;
  /** When it was stored (ms), for the age limit while the bus is down. */
  readonly storedAt: number;
}

function slotOf(entry: RawEntry, answers: SurfaceAnswers, policy: CachePolicy, storedAt: number): Slot {
  const { locked, expiresAt, identity, gzip, brotli, ranges } = answers[policy];
  return { policy, locked, expiresAt, identity, gzip, brotli, ranges, entry, used: false, storedAt };
}

/** Whether an entry's answers wait for a decision per request: a passcode, or a drop that is not public. */
export const isGated = (entry: Pick<RawEntry, 'locked' | 'visibility'>): boolean =>
  entry.locked || entry.visibility !== 'public';

/** The shared-cache policy of an open drop's answer: the latest version, or a pinned `?v=<n>`. */
export const openPolicyOf = (version: number | undefined): CachePolicy => (version === undefined ? 'latest' : 'pinned');

/**
 * Keys are what the fast path has at hand, so it looks them up as they are (answersFor): the canonical raw URL, or
 * the content label followed by the canonical URL on its host. A label starts with a letter or digit, a raw URL with
 * `/`: the two never collide.
 */
function keyOf(ref: DropRef, version: number | undefined, path: string | undefined): string {
  if (path === undefined) {
    const query = version === undefined ? '' : `?v=${version}`;
    return 'slug' in ref ? `/p/${ref.slug}/raw${query}` : `${ref.label}/${query}`;
  }
  const folder = version === undefined ? '' : `v/${version}/`;
  return 'slug' in ref ? `/p/${ref.slug}/raw/${folder}${path}` : `${ref.label}/${folder}${path}`;
}

/**
 * The stored slots and their body bytes, under second-chance (CLOCK) replacement: a hit only sets a flag; eviction
 * walks from the oldest insertion and gives flagged entries another round. Cheaper per hit than moving the key to
 * the end of the Map.
 */
interface SlotTable {
  /** Read directly on a hit (one Map lookup); changed only through the methods. */
  readonly entries: ReadonlyMap<string, Slot>;
  /** Stores `slot` under `key` (replacing what was there), then evicts down to the bounds. */
  put(key: string, slot: Slot): void;
  remove(key: string): void;
  removeSlug(slug: string): void;
  removeAll(): void;
}

function createSlotTable(maxBytes: number, maxEntries: number): SlotTable {
  const entries = new Map<string, Slot>();
  const keysBySlug = new Map<string, Set<string>>();
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
    entries,
    put(key, slot) {
      const entry = slot.entry;
      remove(key);
      entries.set(key, slot);
      bytes += entry.bytes;
      const keys = keysBySlug.get(entry.slug) ?? new Set<string>();
      keysBySlug.set(entry.slug, keys);
      keys.add(key);
      evict();
    },
    remove,
    removeSlug(slug) {
      for (const key of [...(keysBySlug.get(slug) ?? [])]) remove(key);
    },
    removeAll() {
      for (const key of [...entries.keys()]) remove(key);
    },
  };
}

/**
 * Change counter: every invalidation ticks it. A load stamped before a later change of its slug (or before a
 * clear) is not stored. `floor` covers changes whose per-slug stamps were pruned.
 */
function createChangeLog() {
  let tick = 0;
  let floor = 0;
  const changedAt = new Map<string, number>();
  return {
    generation: () => tick,
    /** Whether a load of `slug` stamped `stamp` was overtaken by a change (or a clear). */
    overtaken: (slug: string, stamp: number) => stamp < floor || (changedAt.get(slug) ?? 0) > stamp,
    changed(slug: string): void {
      tick++;
      changedAt.set(slug, tick);
      if (changedAt.size > 10_000) {
        changedAt.clear();
        floor = tick;
      }
    },
    changedAll(): void {
      tick++;
      floor = tick;
      changedAt.clear();
    },
  };
}

export function createRawCache(options: RawCacheOptions = {}): RawCache {
  const maxBytes = options.maxBytes ?? 256 * 1_048_576;
  const maxEntries = options.maxEntries ?? 50_000;
  const maxFileEntryBytes = options.maxFileEntryBytes ?? Math.floor(maxBytes / 8);
  const now = options.now ?? Date.now;
  // 0: the cache is trusted (the normal state; a hit reads no clock). Otherwise the age limit while the bus is down.
  let maxAgeMs = 0;
  const slots = createSlotTable(maxBytes, maxEntries);
  const entries = slots.entries;
  const changes = createChangeLog();

  /** A lookup that counts as a use for the replacement policy. */
  function hit(key: string): Slot | undefined {
    const slot = entries.get(key);
    if (slot === undefined) return undefined;
    if (maxAgeMs !== 0 && now() - slot.storedAt > maxAgeMs) {
      slots.remove(key);
      return undefined;
    }
    slot.used = true;
    return slot;
  }

  return {
    get: (ref, version, path) => hit(keyOf(ref, version, path))?.entry,
    answersFor: hit,
    generation: changes.generation,
    set(entry, ref, requested, stamp, path) {
      if (changes.overtaken(entry.slug, stamp) || entry.bytes > maxBytes) return;
      if (path !== undefined && path !== '' && entry.bytes > maxFileEntryBytes) return;
      const answers = 'slug' in ref ? entry.answers : entry.contentAnswers;
      if (answers === undefined) return;
      const storedAt = maxAgeMs === 0 ? 0 : now();
      slots.put(keyOf(ref, requested, path), slotOf(entry, answers, openPolicyOf(requested), storedAt));
    },
    invalidate(slug) {
      changes.changed(slug);
      slots.removeSlug(slug);
    },
    clear() {
      changes.changedAll();
      slots.removeAll();
    },
    limitAge(limit) {
      // Entries stored while trusted carry no time (0): under a limit they count as old, so they are reloaded.
      maxAgeMs = limit === undefined ? 0 : Math.max(1, limit);
    },
    get size() {
      return entries.size;
    },
  };
}
