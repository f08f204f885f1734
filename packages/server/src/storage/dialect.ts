import type { Kysely, RawBuilder, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** What differs between databases. Everything else lives once in kysely-store.ts and kysely/. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  readonly db: Kysely<Database>;
  /**
   * SQL text value stored under a key in the JSON object column `column`, or NULL. `keyPath` is the value
   * jsonKeyPath() makes of the key (a parameter, so a prepared statement may take it in a slot).
   */
  jsonText(column: 'metadata', keyPath: string): RawBuilder<string | null>;
  /** The parameter jsonText() takes for a metadata key (already validated as [A-Za-z0-9_.-]). */
  jsonKeyPath(key: string): string;
  /**
   * True when text column `column` matches the LIKE `pattern` made by containsPattern(), ignoring case (ASCII case
   * at least: SQLite's LIKE folds ASCII only). The pattern is a value, so a prepared statement may take it in a slot.
   */
  likeIgnoringCase(column: 'title' | 'drops.title', pattern: string): RawBuilder<boolean>;
  /**
   * Schema for Kysely's migration tables, when the dialect has schemas. Needed on PostgreSQL: without it the
   * migrator's existence check sees migration tables of other schemas in the same database.
   */
  migrationSchema(): Promise<string | undefined>;
  /** The database server's current time, Unix ms. */
  now(): Promise<number>;
  /**
   * Runs `work` in a transaction whose commit may reach the disk after it returns: with the next flushed write, or
   * a moment later (SQLite: no wait for the WAL flush, sqlite-durability.ts; PostgreSQL: `synchronous_commit` off).
   * A crash can lose such a commit, never corrupt the database. Only for rate counters, which no acknowledged write
   * depends on (docs/decisions/0027-compressed-deduplicated-bodies.md): a create then waits for one flush, not two.
   */
  lazyTransaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Gives back the memory the connection's caches hold and do not need (SQLite: `PRAGMA shrink_memory`), when the
   * process releases memory after a burst (release-memory.ts). Absent where the database lives in another process.
   */
  readonly releaseMemory?: () => void;
}

/**
 * LIKE pattern for "contains `text`", its wildcards and the escape character escaped with LIKE_ESCAPE (`%`, `_` and
 * `\` in `text` match literally), for the dialects' likeIgnoringCase.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The ESCAPE character of containsPattern (one backslash). Bound as a parameter, not written as a literal: a
 * backslash in a PostgreSQL string literal depends on standard_conforming_strings.
 */
export const LIKE_ESCAPE = '\\';
