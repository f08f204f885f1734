import { type Kysely, sql } from 'kysely';

/**
 * What a migration (or a test of one) sees of the schema it writes to: PostgreSQL's `current_schema()`, the one its
 * unqualified names create in, never another schema's table of the same name; SQLite's main database.
 */
const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter.supportsTransactionalDdl;

/** The columns of `table` (empty when there is no such table). */
export async function columnsOf(db: Kysely<unknown>, table: string): Promise<Set<string>> {
  const { rows } = onPostgres(db)
    ? await sql<{ name: string }>`select column_name as name from information_schema.columns
        where table_schema = current_schema() and table_name = ${table}`.execute(db)
    : await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db);
  return new Set(rows.map((row) => row.name));
}

/** The names of the tables. */
export async function tableNames(db: Kysely<unknown>): Promise<string[]> {
  const { rows } = onPostgres(db)
    ? await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema()`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
  return rows.map((row) => row.name);
}
