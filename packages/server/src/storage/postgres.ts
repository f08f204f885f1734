/** PostgreSQL through node-postgres: the pool, its type parsing, and the dialect's quirks. */
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { type Dialect, LIKE_ESCAPE } from './dialect.js';
import { CurrentSchemaPostgresDialect } from './postgres-introspector.js';
import type { Database } from './schema.js';

export interface PostgresOptions {
  /** Pool size per instance. */
  readonly maxConnections?: number;
  /**
   * An idle pooled connection failed (the server restarted, a failover, an idle-connection killer). The pool drops
   * it and connects again on the next query; this reports it (the service logs it).
   */
  readonly onConnectionError?: (error: Error) => void;
}

/**
 * Connects to `url` (libpq form; `?options=-c%20search_path%3D<schema>` selects a schema, as the tests do).
 * The pool connects lazily; the first query (the migration) reports an unreachable server.
 */
export function openPostgres(url: string, options: PostgresOptions = {}): Dialect {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    // Fail a request rather than hang when the database is unreachable.
    connectionTimeoutMillis: 10_000,
    application_name: 'htmldrop',
  });
  // An idle client's error must not crash the process: the pool replaces the connection; the service logs it.
  pool.on('error', (error) => options.onConnectionError?.(error));
  const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  return {
    name: 'postgres',
    db,
    jsonText: (column, keyPath) => sql<string | null>`(${sql.ref(column)}::jsonb ->> ${keyPath})`,
    jsonKeyPath: (key) => key,
    likeIgnoringCase: (column, pattern) => sql<boolean>`(${sql.ref(column)} ilike ${pattern} escape ${LIKE_ESCAPE})`,
    async now() {
      const { rows } = await sql<{
        ms: string;
      }>`select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as ms`.execute(db);
      return Number(rows[0]?.ms);
    },
    lazyTransaction: (work) =>
      db.transaction().execute(async (trx) => {
        await sql`set local synchronous_commit = off`.execute(trx);
        return work(trx);
      }),
    async migrationSchema() {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return rows[0]?.schema;
    },
  };
}
