/** Read receipts for a drop's owner (docs/api.md 4.3 and "Read receipts"). */
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import type { AccessStore, DropStore, RecipientLink, ViewStore } from './store.js';
import type { DropViewStats } from './types.js';

export interface StatsDeps {
  readonly store: ViewStore & Pick<DropStore, 'findDrop'> & Pick<AccessStore, 'listLinks'>;
  readonly clock: Clock;
}

/**
 * The read receipts of the caller's drop, or 404 not_found / 403 forbidden. As written by the last flush: renders
 * still in an instance's memory are not in them yet (at most one flush interval, 5 s; view_count lags alike), so
 * `views` equals the drop's view_count read at the same moment.
 */
export async function getStats(
  deps: StatsDeps,
  accountId: string,
  slug: string,
): Promise<DropViewStats & { readonly links: readonly RecipientLink[] }> {
  await getOwnedDrop(deps, accountId, slug);
  const [stats, links] = await Promise.all([deps.store.getDropStats(slug), deps.store.listLinks(slug)]);
  // Deleted between the ownership check and the read.
  if (stats === undefined) throw new ApiError('not_found', { message: `No drop with slug "${slug}".` });
  // The views each recipient link opened (docs/api.md, "Who can see a drop"), counted as they happen.
  return { ...stats, links };
}

/** Read receipts as answered to owners (docs/api.md, "Read receipts") and kept in an export's `stats.json`. */
export function statsAnswer(stats: DropViewStats & { readonly links?: readonly RecipientLink[] }) {
  return {
    // The views each recipient link opened (docs/api.md, "Who can see a drop").
    links: (stats.links ?? []).map((l) => ({
      id: l.id,
      label: l.label,
      views: l.views,
      last_viewed_at: l.lastViewedAt,
    })),
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
