/**
 * The migrator sees the service's own schema only (postgres-introspector.ts): another schema of the database, its
 * tables and its being dropped meanwhile change nothing.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/databases.js';
import { openPostgres } from './postgres.js';

describe('PostgreSQL introspection', () => {
  it('lists the tables of the current schema only, and survives other schemas dropped while it reads', async () => {
    const own = await createTestDatabase('postgres');
    const others = await Promise.all(Array.from({ length: 6 }, () => createTestDatabase('postgres')));
    const store = own.open();
    await store.migrate();
    await store.close();
    const dialect = openPostgres(own.databaseUrl ?? '');
    try {
      for (const other of others) {
        const foreign = openPostgres(other.databaseUrl ?? '');
        await sql`create table drops (slug text primary key, stranger text)`.execute(foreign.db);
        await foreign.db.destroy();
      }
      const schema = await dialect.migrationSchema();
      const tables = await dialect.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([schema]));
      expect(tables.find((t) => t.name === 'drops')?.columns.map((c) => c.name)).not.toContain('stranger');
      expect(tables.map((t) => t.name)).toContain('kysely_migration');
      // Reading while the other schemas go: no "schema does not exist".
      const reads = Array.from({ length: 12 }, () => dialect.db.introspection.getTables());
      await Promise.all([...reads, ...others.map((other) => other.drop())]);
      const again = own.open();
      await again.migrate();
      await again.close();
    } finally {
      await dialect.db.destroy();
      await own.drop();
      await Promise.all(others.map((other) => other.drop()));
    }
  });
});
