/**
 * Gives back to the system the memory a burst of work grew (docs/decisions/0042-memory-given-back-after-a-burst.md).
 * V8 shrinks its young generation, and frees the heap pages a burst left empty, only in a full collection made while
 * the allocation rate is low; its own heuristics start one some time after a burst, and after a burst of writes
 * followed by steady reads, not at all: bench:write measured 179 MB a minute after 500 creates of 100 KB and 6 s of
 * listing, and 121 MB after one collection made once the process was quiet. A collection made too soon, while the
 * last seconds' allocation is still high, keeps the young generation at its grown size.
 *
 * V8 reads the allocation rate from what was allocated between its last collections, so the collection that shrinks
 * must follow another one by a quiet while, and even then it did not always shrink (it failed in 2 runs of 5 with two
 * collections, and in none of 3 with three). So: when a burst ends (the encoding worker's idle stop, storage/body-encoder.ts), the event
 * loop's utilization is sampled every QUIET_WINDOW_MS, and at the end of each window under QUIET_UTILIZATION one full
 * collection runs, COLLECTIONS of them in all (a busy window in between starts the count over). Under steady load
 * none runs. The collector is Node's `gc()`, exposed at run time rather than by `--expose-gc` on the command line,
 * which every way of starting the service would have to pass.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8 judges the allocation rate over about the last 5 s. */
const QUIET_WINDOW_MS = 5_000;
/** The share of a window the event loop may be busy and the process still count as quiet. */
const QUIET_UTILIZATION = 0.05;
/** Collections after a burst, one per quiet window. */
const COLLECTIONS = 3;

let collect: (() => void) | undefined;
let watching: NodeJS.Timeout | undefined;
const releasers = new Set<() => void>();

/**
 * Registers what else gives memory back before each collection (SQLite's page cache: 116-117 MB settled with it,
 * 119-121 MB without); returns the function that removes it again (a store that closes).
 */
export function addMemoryReleaser(release: () => void): () => void {
  releasers.add(release);
  return () => void releasers.delete(release);
}

/** The releasers, then one full, synchronous collection (about 20 ms for a heap of 60 MB on the 2-core machine). */
export function releaseMemory(): void {
  for (const release of releasers) {
    try {
      release();
    } catch {
      // Giving memory back is a courtesy: a releaser that cannot (its database just closed) keeps what it has.
    }
  }
  if (collect === undefined) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}

/**
 * Runs releaseMemory() at the end of COLLECTIONS quiet windows in a row, then stops watching; a call while it already
 * watches changes nothing. Never keeps the process alive.
 */
export function releaseMemoryWhenQuiet(window = QUIET_WINDOW_MS): void {
  if (watching !== undefined) return;
  let since = performance.eventLoopUtilization();
  let collected = 0;
  watching = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, since);
    since = now;
    if (utilization >= QUIET_UTILIZATION) {
      collected = 0;
      return;
    }
    releaseMemory();
    // The next window starts after the collection: its own time is not the process being busy.
    since = performance.eventLoopUtilization();
    collected += 1;
    if (collected < COLLECTIONS) return;
    clearInterval(watching);
    watching = undefined;
  }, window);
  watching.unref();
}
