import type { Config } from '../config.js';
import type { Store } from '../domain/store.js';
import { createKyselyStore } from './kysely-store.js';

/**
 * Opens the configured database: PostgreSQL when HTMLDROP_DATABASE_URL is set, else SQLite under the data dir.
 * `onConnectionError` hears about PostgreSQL connections lost while idle (they are replaced on the next query).
 * Only the configured driver is loaded (start-up time and memory: docs/architecture.md, "Process lifecycle").
 */
export async function openStore(config: Config, onConnectionError?: (error: Error) => void): Promise<Store> {
  if (config.databaseUrl === undefined) {
    const { openSqlite } = await import('./sqlite.js');
    return createKyselyStore(openSqlite(config.dataDir));
  }
  const { openPostgres } = await import('./postgres.js');
  return createKyselyStore(
    openPostgres(config.databaseUrl, onConnectionError === undefined ? {} : { onConnectionError }),
  );
}

export type { Store } from '../domain/store.js';
