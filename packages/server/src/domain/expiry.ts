/**
 * Drops that expire (docs/api.md, "Expiry"): the accepted range of `expires_at`, and the purge that deletes expired
 * drops. Serving stops at the expiry instant itself (public-view.ts, the raw route, getOwnedDrop); the purge only
 * reclaims the storage, within the hour, and is safe to run on every instance at once.
 */
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import type { DropChangeListener } from './drops.js';
import { type EventSink, reportDropDeleted } from './events.js';
import type { DropStore } from './store.js';

/** The earliest expiry accepted, from now: time for the client to read its answer and share the link. */
export const MIN_EXPIRY_MS = 60_000;
/** The latest expiry accepted, from now. */
export const MAX_EXPIRY_MS = 365 * 24 * 3_600_000;

/** `expires_at` as given: undefined (unchanged), null (never), or Unix ms within the accepted range. */
export function checkedExpiry(value: number | null | undefined, now: number): number | null | undefined {
  if (value === undefined || value === null) return value;
  const min = now + MIN_EXPIRY_MS;
  const max = now + MAX_EXPIRY_MS;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ApiError('invalid_arg', {
      message:
        'expires_at must be Unix milliseconds between 60 seconds and 365 days from now (null: never expires); ' +
        `got ${value}, now is ${now}.`,
      details: { field: 'expires_at', min, max, now },
    });
  }
  return value;
}

export interface PurgeDeps {
  readonly store: DropStore;
  readonly clock: Clock;
  readonly listener: DropChangeListener;
  /** The owner's webhooks hear `drop.deleted` (reason `expired`) for each drop the purge deletes. */
  readonly events?: EventSink;
}

/** Drops deleted per round; a backlog is worked off round after round. */
const PURGE_BATCH = 200;

/**
 * Deletes the drops expired at the clock's now, in batches, each in its own transaction (the drop, its versions and
 * the account's quota slot together), and tells each deletion as `drop.deleted` with `reason: "expired"` (docs/api.md,
 * "Webhooks"). Several instances purging at once delete each drop once, and so tell it once: the second delete of a
 * slug finds nothing. Returns how many this call deleted.
 */
export async function purgeExpiredDrops(deps: PurgeDeps): Promise<number> {
  let deleted = 0;
  for (;;) {
    const expired = await deps.store.listExpiredDrops(deps.clock.now(), PURGE_BATCH);
    for (const drop of expired) {
      if ((await deps.store.deleteDrop(drop.slug)) === true) {
        deleted += 1;
        await deps.listener.dropChanged(drop.slug);
        await reportDropDeleted(deps.events, drop, 'expired', deps.clock.now());
      }
    }
    if (expired.length < PURGE_BATCH) return deleted;
  }
}
