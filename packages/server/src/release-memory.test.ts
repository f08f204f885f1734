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

describe('releaseMemoryWhenQuiet', () => {
  it('runs three full collections, one per quiet window, then stops watching', async () => {
    const gcs = forcedCollections();
    try {
      releaseMemoryWhenQuiet(40);
      releaseMemoryWhenQuiet(40); // already watching: no second watcher
      for (let i = 0; i < 100 && gcs.seen.length < 3; i++) await sleep(20);
      await sleep(200);
      expect(gcs.seen).toHaveLength(3);
    } finally {
      gcs.stop();
    }
  });

  it('asks every registered releaser first, a failing one included, until it is removed', async () => {
    const gcs = forcedCollections();
    let asked = 0;
    const removeCounter = addMemoryReleaser(() => {
      asked += 1;
    });
    const removeFailing = addMemoryReleaser(() => {
      throw new Error('closed');
    });
    try {
      releaseMemoryWhenQuiet(40);
      for (let i = 0; i < 100 && gcs.seen.length < 3; i++) await sleep(20);
      expect(gcs.seen).toHaveLength(3);
      expect(asked).toBe(3);
      removeCounter();
      releaseMemoryWhenQuiet(40);
      for (let i = 0; i < 100 && gcs.seen.length < 6; i++) await sleep(20);
      expect(gcs.seen).toHaveLength(6);
      expect(asked).toBe(3);
    } finally {
      removeCounter();
      removeFailing();
      gcs.stop();
    }
  });

  it('runs none while the event loop stays busy', async () => {
    const gcs = forcedCollections();
    try {
      releaseMemoryWhenQuiet(40);
      await busyFor(300);
      expect(gcs.seen).toHaveLength(0);
      // Quiet again: the collections follow.
      for (let i = 0; i < 100 && gcs.seen.length < 3; i++) await sleep(20);
      expect(gcs.seen).toHaveLength(3);
    } finally {
      gcs.stop();
    }
  });
});
