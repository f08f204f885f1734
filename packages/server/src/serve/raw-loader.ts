/**
 * The raw cache's miss path: find the stored document (the domain's answer), build its entry (injection, ETags,
 * compressed variants) and keep it, unless the drop changed while it loaded. The fast path and the route read
 * through the same cache; this is the one place that fills it.
 */
import type { DropRecord, VersionContent } from '../domain/types.js';
import { buildRawEntry } from './raw.js';
import type { RawCache, RawEntry } from './raw-cache.js';

/** Finds what `/p/<slug>/raw[?v=<n>]` serves, or undefined when it does not exist. */
export type RawSource = (
  slug: string,
  version: number | undefined,
) => Promise<{ drop: DropRecord; content: VersionContent } | undefined>;

export type RawLoader = (slug: string, version: number | undefined) => Promise<RawEntry | undefined>;

export function createRawLoader(cache: RawCache, source: RawSource): RawLoader {
  return async (slug, version) => {
    const cached = cache.get(slug, version);
    if (cached !== undefined) return cached;
    // Stamped before the read: a change announced meanwhile keeps this load out of the cache.
    const generation = cache.generation(slug);
    const found = await source(slug, version);
    if (found === undefined) return undefined;
    const entry = await buildRawEntry(found.drop, found.content);
    cache.set(entry, version, generation);
    return entry;
  };
}
