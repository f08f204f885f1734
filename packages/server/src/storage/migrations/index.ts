import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';

/** Ordered migrations. Names sort in application order; never rename or edit a released one. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(MIGRATIONS),
};
