import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { createKyselyStore } from './kysely-store.js';
import { openSqlite } from './sqlite.js';
import type { Store } from './store.js';

/** Opens the configured database (SQLite under the data dir unless HTMLDROP_DATABASE_URL is set). */
export function openStore(config: Config): Store {
  if (config.databaseUrl !== undefined) {
    throw new ConfigError('HTMLDROP_DATABASE_URL (PostgreSQL) is not supported yet; unset it to use embedded SQLite');
  }
  return createKyselyStore(openSqlite(config.dataDir));
}

export type { Store } from './store.js';
