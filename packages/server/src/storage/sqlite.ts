/** SQLite through better-sqlite3: the connection and its pragmas, and the dialect's quirks. */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { ensurePrivateDir } from '../private-dir.js';
import { type Dialect, LIKE_ESCAPE } from './dialect.js';
import type { Database } from './schema.js';
import { createWalFlusher, GroupCommitSqliteDialect } from './sqlite-durability.js';

export const SQLITE_FILE_NAME = 'htmldrop.sqlite';

/**
 * Opens (creating when needed) `<dataDir>/htmldrop.sqlite` in WAL mode. The directory is made 0700 and the database
 * file 0600 before SQLite opens it; SQLite gives its -wal and -shm files the database file's mode.
 */
export function openSqlite(dataDir: string): Dialect {
  ensurePrivateDir(dataDir);
  const file = path.join(dataDir, SQLITE_FILE_NAME);
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  fs.chmodSync(file, 0o600);
  for (const suffix of ['-wal', '-shm']) {
    if (fs.existsSync(file + suffix)) fs.chmodSync(file + suffix, 0o600);
  }
  return openSqliteFile(file);
}

export function openSqliteFile(file: string): Dialect {
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  // NORMAL: a commit does not flush; every acknowledged write waits for a flush of the WAL instead, shared by the
  // writes committed meanwhile (sqlite-durability.ts), so it survives a power loss as with FULL
  // (docs/decisions/0027-compressed-deduplicated-bodies.md, "Flushing").
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const state = { lazy: false };
  const dialect = new GroupCommitSqliteDialect(
    { database: withStatementCache(database) },
    createWalFlusher(`${file}-wal`),
    state,
  );
  const db = new Kysely<Database>({ dialect });
  return {
    name: 'sqlite',
    db,
    // LIKE ignores ASCII case (case_sensitive_like is never set).
    jsonText: (column, keyPath) => sql<string | null>`json_extract(${sql.ref(column)}, ${keyPath})`,
    jsonKeyPath: (key) => `$."${key}"`,
    likeIgnoringCase: (column, pattern) => sql<boolean>`(${sql.ref(column)} like ${pattern} escape ${LIKE_ESCAPE})`,
    migrationSchema: async () => undefined,
    // Embedded: the database runs on this machine's clock.
    now: async () => Date.now(),
    // Its page cache grows to 2 MB and stays; freed, glibc can give the pages back (decision 0042).
    releaseMemory: () => void database.pragma('shrink_memory'),
    // The one connection is exclusive while this runs: its release skips the flush (sqlite-durability.ts).
    lazyTransaction: (work) =>
      db.connection().execute((connection) => {
        state.lazy = true;
        return connection.transaction().execute(work);
      }),
  };
}

/** Prepared statements kept per SQL text: Kysely prepares every query it runs, which cost a create 6% of its time. */
const STATEMENT_CACHE_SIZE = 500;

/** A statement as Kysely's SQLite driver uses it. */
type DriverStatement = Pick<SqliteDatabase.Statement, 'reader' | 'all' | 'run' | 'iterate'>;

/** A statement that changes the schema: the statements kept before it may name columns that are no longer there. */
const SCHEMA_CHANGE = /^\s*(?:create|alter|drop)\b/i;

/**
 * The database as Kysely's SQLite driver sees it, preparing each distinct SQL text once. The driver runs statements
 * with `all` or `run` (never an open iterator: this store streams no query), so reusing one is safe. Bounded: a full
 * cache starts over, and so does a change of the schema (a migration), since a kept reader builds its rows from the
 * columns it had when it was prepared (withRowBuilder()).
 */
function withStatementCache(database: SqliteDatabase.Database) {
  const statements = new Map<string, DriverStatement>();
  return {
    prepare(text: string) {
      if (SCHEMA_CHANGE.test(text)) statements.clear();
      let statement = statements.get(text);
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
        statement = withRowBuilder(database.prepare(text));
        statements.set(text, statement);
      }
      return statement;
    },
    close: () => database.close(),
  };
}

/**
 * A reader whose rows are built in JavaScript from better-sqlite3's raw arrays, each by one object literal made for
 * the statement's columns (docs/decisions/0044-rows-built-in-javascript.md). better-sqlite3 builds a row object
 * through V8's API, one property at a time, which took a 25-row page of the owner's list 140 µs against 95 µs this
 * way; every row of a statement also shares one hidden class, so the code reading rows stays monomorphic. The rows
 * are the same plain objects: a later column of the same name wins, as in better-sqlite3.
 */
export function withRowBuilder(statement: SqliteDatabase.Statement): DriverStatement {
  if (!statement.reader) return statement;
  const names = statement.columns().map((column) => column.name);
  // `__proto__` in a literal would set the prototype: such a statement keeps better-sqlite3's own rows.
  if (names.includes('__proto__')) return statement;
  const raw = statement.raw(true);
  // The names are the statement's own column names, quoted by JSON.stringify: the literal holds no other code.
  const build = new Function(
    'r',
    `return {${names.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')}};`,
  ) as (row: unknown[]) => unknown;
  return {
    reader: true,
    all(...parameters: unknown[]) {
      const rows = raw.all(...parameters) as unknown[];
      for (let i = 0; i < rows.length; i++) rows[i] = build(rows[i] as unknown[]);
      return rows;
    },
    run: (...parameters: unknown[]) => raw.run(...parameters),
    *iterate(...parameters: unknown[]) {
      for (const row of raw.iterate(...parameters)) yield build(row as unknown[]);
    },
  } as DriverStatement;
}
