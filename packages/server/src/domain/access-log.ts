/**
 * A drop's access log (docs/api.md, "Who can see a drop"): each viewer render (`viewed`) and each refusal on any path
 * to the drop (`refused`, with the reason), with who it was (the provider username of a person, the label of a link)
 * and the version. No address or user agent is kept. Entries are kept 90 days, then the purge deletes them.
 */
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import { randomBase62 } from './ids.js';
import type { AccessEntry, AccessStore, AccessWho, DropStore, RefusalReason } from './store.js';

/** How long entries are kept. */
export const ACCESS_LOG_RETENTION_MS = 90 * 24 * 60 * 60_000;

/** At most this many entries in one answer of the log (the newest). */
export const ACCESS_LOG_PAGE = 1000;

export interface AccessLogDeps {
  readonly store: Pick<AccessStore, 'appendAccess' | 'listAccess' | 'purgeAccess'> & Pick<DropStore, 'findDrop'>;
  readonly clock: Clock;
}

/** Ids that sort as the entries were made (time first), so entries of one millisecond keep their order. */
const entryId = (at: number) => `${at.toString(36).padStart(9, '0')}${randomBase62(8)}`;

/** Appends one entry to a drop's log. */
export async function recordAccess(
  deps: { readonly store: Pick<AccessStore, 'appendAccess'>; readonly clock: Clock },
  slug: string,
  entry: { outcome: 'viewed' | 'refused'; reason: RefusalReason | null; who: AccessWho; version: number | null },
): Promise<void> {
  const at = deps.clock.now();
  await deps.store.appendAccess([{ id: entryId(at), slug, at, ...entry }]);
}

/** The owner's drop's entries at or after `since` (Unix ms; 0 for all that are kept), newest first. */
export async function readAccess(
  deps: AccessLogDeps,
  accountId: string,
  slug: string,
  since: number,
): Promise<AccessEntry[]> {
  await getOwnedDrop(deps, accountId, slug);
  return deps.store.listAccess(slug, Math.max(0, since), ACCESS_LOG_PAGE);
}

/** Deletes the entries older than the retention (the purge timer, server.ts). */
export function purgeAccessLog(deps: AccessLogDeps): Promise<void> {
  return deps.store.purgeAccess(deps.clock.now() - ACCESS_LOG_RETENTION_MS);
}
