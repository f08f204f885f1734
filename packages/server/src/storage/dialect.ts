import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/** What differs between databases. Everything else lives once in kysely-store.ts and kysely/. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  readonly db: Kysely<Database>;
  /**
   * SQL text value stored under `key` in the JSON object column `column`, or NULL.
   * `key` must already be validated as a metadata key ([A-Za-z0-9_.-]).
   */
  jsonText(column: 'metadata', key: string): RawBuilder<string | null>;
  /**
   * Schema for Kysely's migration tables, when the dialect has schemas. Needed on PostgreSQL: without it the
   * migrator's existence check sees migration tables of other schemas in the same database.
   */
  migrationSchema(): Promise<string | undefined>;
  /** The database server's current time, Unix ms. */
  now(): Promise<number>;
}
