/**
 * What an instance does with the bus's announcements: drop the changed slug from its raw cache; drop everything
 * after a lost connection; and while the bus is down, serve a cached document for at most `maxAgeWithoutBusMs`
 * before reading it from the database again, so no instance serves a document changed, locked or deleted elsewhere
 * for longer than that (docs/architecture.md, "When the bus is down").
 */
import type { RawCache } from '../serve/raw-cache.js';
import type { BusReceiver } from './bus.js';

export interface StatusLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** How often a bus that stays down is logged again. */
const REPEAT_LOG_MS = 30_000;

export function createCacheReceiver(
  cache: RawCache,
  maxAgeWithoutBusMs: number,
  log: StatusLog,
  now: () => number = Date.now,
): BusReceiver {
  let downSince: number | undefined;
  let loggedAt = 0;
  return {
    onChange: (slug) => cache.invalidate(slug),
    reset: () => cache.clear(),
    onStatus(subscribed, error) {
      const at = now();
      if (subscribed) {
        if (downSince === undefined) return;
        cache.limitAge(undefined);
        log.info({ downForMs: at - downSince }, 'invalidation bus subscribed again; raw cache cleared and trusted');
        downSince = undefined;
        return;
      }
      if (downSince === undefined) {
        downSince = at;
        cache.limitAge(maxAgeWithoutBusMs);
      } else if (at - loggedAt < REPEAT_LOG_MS) {
        return;
      }
      loggedAt = at;
      log.warn(
        { err: error, downForMs: at - downSince, cacheMaxAgeMs: maxAgeWithoutBusMs },
        'invalidation bus down: reconnecting; cached documents are re-read from the database after cacheMaxAgeMs',
      );
    },
  };
}
