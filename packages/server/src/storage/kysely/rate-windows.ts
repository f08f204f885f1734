/**
 * Rate counters over Kysely: fixed windows counted atomically across instances, given back, and purged (with
 * device requests past their retention) once expired. Each method's atomicity is stated on it in domain/store.ts.
 */
import type { Kysely } from 'kysely';
import type { RateWindow, Store } from '../../domain/store.js';
import type { Dialect } from '../dialect.js';
import type { Database } from '../schema.js';
import { prepared, slot } from './prepared.js';
import { inTransaction, Rollback } from './shared.js';

export type RateWindowStore = Pick<Store, 'hitRateWindows' | 'releaseRateWindow' | 'purgeExpired'>;

export function rateWindowStore(dialect: Dialect): RateWindowStore {
  const { db } = dialect;
  return {
    hitRateWindows: hitRateWindows(dialect),
    releaseRateWindow: releaseRateWindow(db),
    purgeExpired: purgeExpired(db),
  };
}

/** One window's insert-or-increment below its limit, compiled once (kysely/prepared.ts): every write runs it. */
const hitWindow = prepared<{ key: string; endsAt: number; limit: number }>((db) =>
  db
    .insertInto('rate_windows')
    .values({ key: slot('key'), count: 1, ends_at: slot('endsAt') })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) }))
        .where('rate_windows.count', '<', slot<number>('limit')),
    )
    .returning('count'),
);

/** A lazy transaction (Dialect.lazyTransaction): a counted write flushes with the write it admits. */
function hitRateWindows(dialect: Dialect): Store['hitRateWindows'] {
  type Hit = { exceeded: number | undefined };
  return (windows: readonly RateWindow[]) =>
    inTransaction<Hit, Hit>(dialect.lazyTransaction, async (trx) => {
      for (const [index, window] of windows.entries()) {
        const { rows } = await hitWindow<{ count: number }>(trx, {
          key: window.key,
          endsAt: window.endsAt,
          limit: window.limit,
        });
        const row = rows[0];
        if (row === undefined) throw new Rollback({ exceeded: index });
      }
      return { exceeded: undefined };
    });
}

function releaseRateWindow(db: Kysely<Database>): Store['releaseRateWindow'] {
  return async (key) => {
    await db
      .updateTable('rate_windows')
      .set((eb) => ({ count: eb('count', '-', 1) }))
      .where('key', '=', key)
      .where('count', '>', 0)
      .execute();
  };
}

function purgeExpired(db: Kysely<Database>): Store['purgeExpired'] {
  return async (now, deviceRetentionMs) => {
    await db.deleteFrom('rate_windows').where('ends_at', '<=', now).execute();
    await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
    await db
      .deleteFrom('device_requests')
      .where('expires_at', '<', now - deviceRetentionMs)
      .execute();
  };
}
