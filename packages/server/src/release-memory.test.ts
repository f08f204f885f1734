import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { addMemoryReleaser, releaseMemoryWhenQuiet } from './release-memory.js';

/** The forced full collections (Node's `gc()`) the process runs from now on, as they happen. */
function forcedCollections() {
  const seen: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind: number; flags: number } })[]) {
      const detail = entry.detail;
      if (detail === undefined) continue;
      const forced = (detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
      if (forced && detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) seen.push(Date.now());
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return { seen, stop: () => observer.disconnect() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop busy (synchronous work in every turn) for `ms`. */
async function busyFor(ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const turn = Date.now() + 5;
    while (Date.now() < turn) {
      // busy
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Windows of 250 ms: a collection leaves V8 some sweeping to do on the main thread, which in a window of a few tens of
 * milliseconds can pass the 5% that counts as busy and start the count over (the service's windows are 5 s).
 */
const WINDOW = 250;

/** Waits until `seen` holds `count` collections (at most 15 s), then two more windows: a watcher must have stopped. */
async function collectionsSettle(seen: readonly number[], count: number) {
  for (let i = 0; i < 300 && seen.length < count; i++) await sleep(50);
  const reached = seen.length;
  await sleep(2 * WINDOW + 100);
  return { reached, after: seen.length };
}

describe('releaseMemoryWhenQuiet', () => {
  it('runs full collections in quiet windows, three in a row, then stops watching', async () => {
    const gcs = forcedCollections();
    try {
      releaseMemoryWhenQuiet(WINDOW);
      releaseMemoryWhenQuiet(WINDOW); // already watching: no second watcher
      const { reached, after } = await collectionsSettle(gcs.seen, 3);
      expect(reached).toBeGreaterThanOrEqual(3);
      expect(after).toBe(reached); // stopped
    } finally {
      gcs.stop();
    }
  });

  it('asks every registered releaser before each collection, a failing one included, until it is removed', async () => {
    const gcs = forcedCollections();
    let asked = 0;
    const removeCounter = addMemoryReleaser(() => {
      asked += 1;
    });
    const removeFailing = addMemoryReleaser(() => {
      throw new Error('closed');
    });
    try {
      releaseMemoryWhenQuiet(WINDOW);
      const first = await collectionsSettle(gcs.seen, 3);
      expect(first.reached).toBeGreaterThanOrEqual(3);
      expect(asked).toBe(first.after);
      removeCounter();
      releaseMemoryWhenQuiet(WINDOW);
      const second = await collectionsSettle(gcs.seen, first.after + 3);
      expect(second.reached).toBeGreaterThanOrEqual(first.after + 3);
      expect(asked).toBe(first.after);
    } finally {
      removeCounter();
      removeFailing();
      gcs.stop();
    }
  });

  it('runs none while the event loop stays busy, and its collections once it is quiet', async () => {
    const gcs = forcedCollections();
    try {
      releaseMemoryWhenQuiet(WINDOW);
      await busyFor(3 * WINDOW);
      expect(gcs.seen).toHaveLength(0);
      const { reached } = await collectionsSettle(gcs.seen, 3);
      expect(reached).toBeGreaterThanOrEqual(3);
    } finally {
      gcs.stop();
    }
  });
});
