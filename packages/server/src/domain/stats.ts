/** Read receipts for a drop's owner (docs/api.md 4.3 and "Read receipts"). */
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import type { DropStore, ViewStore } from './store.js';
import type { DropViewStats } from './types.js';

export interface StatsDeps {
  readonly store: ViewStore & Pick<DropStore, 'findDrop'>;
  readonly clock: Clock;
}

/**
 * The read receipts of the caller's drop, or 404 not_found / 403 forbidden. As written by the last flush: renders
 * still in an instance's memory are not in them yet (at most one flush interval, 5 s; view_count lags alike), so
 * `views` equals the drop's view_count read at the same moment.
 */
export async function getStats(deps: StatsDeps, accountId: string, slug: string): Promise<DropViewStats> {
  await getOwnedDrop(deps, accountId, slug);
  const stats = await deps.store.getDropStats(slug);
  // Deleted between the ownership check and the read.
  if (stats === undefined) throw new ApiError('not_found', { message: `No drop with slug "${slug}".` });
  return stats;
}

/** Read receipts as answered to owners (docs/api.md, "Read receipts") and kept in an export's `stats.json`. */
export function statsAnswer(stats: DropViewStats) {
  return {
    views: stats.views,
    unique_viewers: stats.uniqueViewers,
    first_viewed_at: stats.firstViewedAt,
    last_viewed_at: stats.lastViewedAt,
    versions: stats.versions.map((v) => ({
      version: v.version,
      views: v.views,
      unique_viewers: v.uniqueViewers,
      last_viewed_at: v.lastViewedAt,
    })),
  };
}
