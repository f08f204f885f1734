/**
 * The raw cache's miss path: find the stored document (the domain's answer), build its entry (injection, ETags,
 * compressed variants, the answers of each surface) and keep it, unless the drop changed while it loaded. The fast
 * path and the routes read through the same cache; this is the one place that fills it.
 */
import type { DropRecord, VersionContent } from '../domain/types.js';
import { buildRawEntry, type ServeOptions } from './raw.js';
import type { DropRef, RawCache, RawEntry } from './raw-cache.js';

/** Finds what a drop serves for `version` (undefined: the latest), or undefined when it does not exist. */
export type RawSource = (
  ref: DropRef,
  version: number | undefined,
) => Promise<{ drop: DropRecord; content: VersionContent } | undefined>;

/** `/p/<slug>/raw[?v=<n>]` by slug, or the drop's own origin by content label. */
export type RawLoader = (ref: DropRef, version: number | undefined) => Promise<RawEntry | undefined>;

export function createRawLoader(cache: RawCache, source: RawSource, options: ServeOptions): RawLoader {
  return async (ref, version) => {
    const cached = cache.get(ref, version);
    if (cached !== undefined) return cached;
    // Stamped before the read: a change announced meanwhile keeps this load out of the cache.
    const generation = cache.generation();
    const found = await source(ref, version);
    if (found === undefined) return undefined;
    const entry = await buildRawEntry(found.drop, found.content, options);
    cache.set(entry, ref, version, generation);
    return entry;
  };
}
