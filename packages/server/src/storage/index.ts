import type { Config } from '../config.js';
import type { Store } from '../domain/store.js';
import { createKyselyStore } from './kysely-store.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

/**
 * Opens the configured database: PostgreSQL when HTMLDROP_DATABASE_URL is set, else SQLite under the data dir.
 * `onConnectionError` hears about PostgreSQL connections lost while idle (they are replaced on the next query).
 */
export function openStore(config: Config, onConnectionError?: (error: Error) => void): Store {
  return createKyselyStore(
    config.databaseUrl === undefined
      ? openSqlite(config.dataDir)
      : openPostgres(config.databaseUrl, onConnectionError === undefined ? {} : { onConnectionError }),
  );
}

export type { Store } from '../domain/store.js';
