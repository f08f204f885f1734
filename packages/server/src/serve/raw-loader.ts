/**
 * The raw cache's miss path: find the stored document or file (the domain's answer), build its entry (injection for a
 * document, ETags, compressed variants, the answers of each surface) and keep it, unless the drop changed while it
 * loaded. The fast path and the routes read through the same cache; this is the one place that fills it.
 */
import type { DropRecord, VersionContent, VersionFileContent } from '../domain/types.js';
import { buildFileEntry, buildRawEntry, type ServeOptions } from './raw.js';
import type { DropRef, RawCache, RawEntry } from './raw-cache.js';

/** Finds what a drop serves for `version` (undefined: the latest), or undefined when it does not exist. */
export type RawSource = (
  ref: DropRef,
  version: number | undefined,
) => Promise<{ drop: DropRecord; content: VersionContent } | undefined>;

/**
 * `/p/<slug>/raw[?v=<n>]` by slug, or the drop's own origin by content label. `folder`: the document as its version's
 * folder names it (`/v/<n>/`, docs/api.md, "Many files in one drop"), cached under that URL.
 */
export type RawLoader = (ref: DropRef, version: number | undefined, folder?: boolean) => Promise<RawEntry | undefined>;

export function createRawLoader(cache: RawCache, source: RawSource, options: ServeOptions): RawLoader {
  return async (ref, version, folder) => {
    const path = folder === true ? '' : undefined;
    const cached = cache.get(ref, version, path);
    if (cached !== undefined) return cached;
    // Stamped before the read: a change announced meanwhile keeps this load out of the cache.
    const generation = cache.generation();
    const found = await source(ref, version);
    if (found === undefined) return undefined;
    const entry = await buildRawEntry(found.drop, found.content, options);
    cache.set(entry, ref, version, generation, path);
    return entry;
  };
}

/** Finds one file of a drop's version (undefined: the latest), or undefined when there is no such file. */
export type FileSource = (
  ref: DropRef,
  version: number | undefined,
  path: string,
) => Promise<{ drop: DropRecord; content: VersionFileContent } | undefined>;

/** A version's file (docs/api.md, "Many files in one drop"), by slug on the raw path or by label on its own origin. */
export type FileLoader = (ref: DropRef, version: number | undefined, path: string) => Promise<RawEntry | undefined>;

/**
 * The file loader: as the document's, and concurrent misses of one file share one load (a file may be megabytes, and
 * a page asks for its files all at once). A load is shared only while no change has been announced since it began,
 * so a request that follows a change never gets what was there before it.
 */
export function createFileLoader(cache: RawCache, source: FileSource, options: ServeOptions): FileLoader {
  const loading = new Map<string, { readonly generation: number; readonly entry: Promise<RawEntry | undefined> }>();
  return async (ref, version, path) => {
    const cached = cache.get(ref, version, path);
    if (cached !== undefined) return cached;
    const generation = cache.generation();
    const key = `${'slug' in ref ? `s:${ref.slug}` : `l:${ref.label}`} ${version ?? ''} ${path}`;
    const running = loading.get(key);
    if (running !== undefined && running.generation === generation) return running.entry;
    const entry = (async () => {
      const found = await source(ref, version, path);
      if (found === undefined) return undefined;
      const built = await buildFileEntry(found.drop, found.content, options);
      cache.set(built, ref, version, generation, path);
      return built;
    })();
    loading.set(key, { generation, entry });
    try {
      return await entry;
    } finally {
      if (loading.get(key)?.entry === entry) loading.delete(key);
    }
  };
}
