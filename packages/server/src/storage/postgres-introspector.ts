/**
 * What Kysely's migrator sees of a PostgreSQL database: the schema this service works in (`current_schema()`, the
 * first of its `search_path`), nothing else. Kysely's own introspector lists every table of every schema and names
 * each for `pg_get_serial_sequence()`, which fails ("schema … does not exist") when another schema is dropped while
 * it runs: one database shared by several instances or test suites, each in its own schema, made a migration fail at
 * random. This one reads `information_schema` for the current schema only, by identifiers, never by names.
 */
import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  schema: string;
  table: string;
  type: string;
  column: string;
  data_type: string;
  nullable: string;
  has_default: boolean;
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.#db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select t.table_schema as schema, t.table_name as table, t.table_type as type, c.column_name as column,
        c.data_type, c.is_nullable as nullable, c.column_default is not null as has_default
      from information_schema.tables t
      left join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
      where t.table_schema = current_schema()
      order by t.table_name, c.ordinal_position`.execute(this.#db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && row.table.startsWith('kysely_')) continue;
      let table = tables.get(row.table);
      if (table === undefined) {
        table = { name: row.table, schema: row.schema, isView: row.type === 'VIEW', columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.data_type,
        isNullable: row.nullable === 'YES',
        isAutoIncrementing: false,
        hasDefaultValue: row.has_default,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect with the introspector above. */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
