/**
 * The Store, written once over Kysely. Dialect-specific SQL comes from the Dialect. The methods live in one module
 * per aggregate under kysely/ (accounts and tokens, drops and versions, device requests, rate counters, settings,
 * view statistics, idempotency keys, OAuth clients and codes), with what they share in kysely/shared.ts; this file assembles them.
 */
import { Migrator, sql } from 'kysely';
import type { Store } from '../domain/store.js';
import { addMemoryReleaser } from '../release-memory.js';
import { createBodyEncoder } from './body-encoder.js';
import type { Dialect } from './dialect.js';
import { accessStore } from './kysely/access.js';
import { accountStore } from './kysely/accounts.js';
import { commentStore } from './kysely/comments.js';
import { deviceRequestStore } from './kysely/device-requests.js';
import { dropStore } from './kysely/drops.js';
import { idempotencyStore } from './kysely/idempotency.js';
import { importStore } from './kysely/imports.js';
import { oauthStore } from './kysely/oauth.js';
import { previewStore } from './kysely/previews.js';
import { rateWindowStore } from './kysely/rate-windows.js';
import { settingStore } from './kysely/settings.js';
import { viewStatsStore } from './kysely/view-stats.js';
import { warningStore } from './kysely/warnings.js';
import { webhookStore } from './kysely/webhooks.js';
import { migrationOrder, migrationProvider } from './migrations/index.js';

/** Bounds a test may shrink, so that what happens past them is tested without thousands of rows. */
export interface StoreTuning {
  /** How many matches a search ranks by relevance (kysely/search.ts, RANK_WINDOW). */
  readonly rankWindow?: number;
}

export function createKyselyStore(dialect: Dialect, tuning: StoreTuning = {}): Store {
  const { db } = dialect;
  const bodies = createBodyEncoder({ packText: dialect.name === 'sqlite', releaseMemoryWhenIdle: true });
  const stopReleasing = dialect.releaseMemory === undefined ? undefined : addMemoryReleaser(dialect.releaseMemory);

  return {
    async migrate() {
      const schema = await dialect.migrationSchema();
      const migrator = new Migrator({
        db,
        provider: migrationProvider,
        nameComparator: migrationOrder,
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error !== undefined || failed !== undefined) {
        throw new Error(`migration ${failed?.migrationName ?? ''} failed`, { cause: error });
      }
    },

    async close() {
      stopReleasing?.();
      await bodies.close();
      await db.destroy();
    },

    databaseTime: () => dialect.now(),

    async ping() {
      await sql`select 1`.execute(db);
    },

    ...accountStore(db),
    ...dropStore(dialect, bodies, tuning.rankWindow),
    ...deviceRequestStore(db),
    ...rateWindowStore(dialect),
    ...settingStore(db),
    ...viewStatsStore(db),
    ...commentStore(db),
    ...idempotencyStore(db),
    ...oauthStore(db),
    ...webhookStore(db),
    ...warningStore(db),
    ...accessStore(db),
    ...previewStore(db),
    ...importStore(db, bodies, dialect.name),
  };
}
