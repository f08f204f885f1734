/**
 * Real databases for tests: a SQLite file in a temporary directory, or a fresh schema in the local PostgreSQL
 * (each test database its own schema, so suites run in parallel and leave nothing behind).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { type Kysely, Migrator } from 'kysely';
import pg from 'pg';
import type { Store } from '../src/domain/store.js';
import { createKyselyStore, type StoreTuning } from '../src/storage/kysely-store.js';
import { migrationOrder, migrationProvider } from '../src/storage/migrations/index.js';
import { openPostgres } from '../src/storage/postgres.js';
import type { Database } from '../src/storage/schema.js';
import { openSqlite } from '../src/storage/sqlite.js';
import { tempDir } from './temp.js';

export type DialectName = 'sqlite' | 'postgres';
export const DIALECTS: readonly DialectName[] = ['sqlite', 'postgres'];

/** The dialect the HTTP suites run on in this vitest project (see vitest.config.ts). */
export const TEST_DIALECT: DialectName = process.env.HTMLDROP_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export const POSTGRES_URL = process.env.HTMLDROP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.HTMLDROP_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  readonly dialect: DialectName;
  /** For SQLite, the data directory; for PostgreSQL, a temporary directory too (unused by the store). */
  readonly dataDir: string;
  /** HTMLDROP_DATABASE_URL for processes that should share this database (PostgreSQL only). */
  readonly databaseUrl: string | undefined;
  /** A new store on this database (the caller closes it). */
  open(tuning?: StoreTuning): Store;
  /** Drops the schema / removes the files. */
  drop(): Promise<void>;
}

/** A URL whose connections use `schema` as their search path. */
export function schemaUrl(base: string, schema: string): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(dialect: DialectName = TEST_DIALECT): Promise<TestDatabase> {
  const dataDir = tempDir();
  if (dialect === 'sqlite') {
    return {
      dialect,
      dataDir,
      databaseUrl: undefined,
      open: (tuning) => createKyselyStore(openSqlite(dataDir), tuning),
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const databaseUrl = schemaUrl(POSTGRES_URL, schema);
  return {
    dialect,
    dataDir,
    databaseUrl,
    open: (tuning) => createKyselyStore(openPostgres(databaseUrl), tuning),
    drop: async () => {
      await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A raw handle on a database the service migrated, at the newest migration: for tests that look at what the service
 * stored. (openAtMigration() with the name of a migration that was once the newest would undo every later one.)
 */
export async function openMigrated(database: TestDatabase): Promise<Kysely<Database>> {
  const opened =
    database.dialect === 'sqlite' ? openSqlite(database.dataDir) : openPostgres(database.databaseUrl ?? '');
  const schema = await opened.migrationSchema();
  const migrator = new Migrator({
    db: opened.db,
    provider: migrationProvider,
    nameComparator: migrationOrder,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) throw error;
  return opened.db;
}

/**
 * The database as an earlier version left it: migrated up to `migration` (a name in storage/migrations/index.ts),
 * for upgrade tests. The caller writes what that version stored, then migrates with a store, and destroys `db`.
 */
export async function openAtMigration(database: TestDatabase, migration: string): Promise<Kysely<Database>> {
  const opened =
    database.dialect === 'sqlite' ? openSqlite(database.dataDir) : openPostgres(database.databaseUrl ?? '');
  const schema = await opened.migrationSchema();
  const migrator = new Migrator({
    db: opened.db,
    provider: migrationProvider,
    nameComparator: migrationOrder,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error } = await migrator.migrateTo(migration);
  if (error !== undefined) throw error;
  return opened.db;
}
