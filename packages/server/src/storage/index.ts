import type { Config } from '../config.js';
import { createKyselyStore } from './kysely-store.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';
import type { Store } from './store.js';

/** Opens the configured database: PostgreSQL when HTMLDROP_DATABASE_URL is set, else SQLite under the data dir. */
export function openStore(config: Config): Store {
  return createKyselyStore(
    config.databaseUrl === undefined ? openSqlite(config.dataDir) : openPostgres(config.databaseUrl),
  );
}

export type { Store } from './store.js';
