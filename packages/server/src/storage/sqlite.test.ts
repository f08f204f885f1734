/** The SQLite dialect's own parts (sqlite.ts) beyond group commit (sqlite-durability.test.ts). */
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/temp.js';
import { openSqliteFile, withRowBuilder } from './sqlite.js';

describe('the SQLite dialect', () => {
  it('reads the columns a table has now after a migration changed it (kept statements start over)', async () => {
    const dialect = openSqliteFile(path.join(tempDir(), 'd.sqlite'));
    try {
      await sql`create table t (a integer, b text)`.execute(dialect.db);
      await sql`insert into t values (1, 'x')`.execute(dialect.db);
      // The same SQL text each time (`select * from "t"`), so the statement cache would hand back the first one.
      const firstRow = async () =>
        (
          await dialect.db
            .selectFrom('t' as never)
            .selectAll()
            .execute()
        )[0];
      expect(await firstRow()).toEqual({ a: 1, b: 'x' });
      await sql`alter table t add column c text default 'new'`.execute(dialect.db);
      await sql`alter table t rename column a to z`.execute(dialect.db);
      expect(await firstRow()).toEqual({ z: 1, b: 'x', c: 'new' });
    } finally {
      await dialect.db.destroy();
    }
  });

  it('gives its page cache back on request and goes on answering (release-memory.ts)', async () => {
    const dialect = openSqliteFile(path.join(tempDir(), 'd.sqlite'));
    try {
      await sql`create table t (a integer, b text)`.execute(dialect.db);
      for (let i = 0; i < 200; i++) await sql`insert into t values (${i}, ${'x'.repeat(2000)})`.execute(dialect.db);
      expect(dialect.releaseMemory).toBeTypeOf('function');
      dialect.releaseMemory?.();
      const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(dialect.db);
      expect(rows[0]?.n).toBe(200);
    } finally {
      await dialect.db.destroy();
    }
  });

  it("builds rows in JavaScript that equal better-sqlite3's own, column for column (decision 0044)", () => {
    const database = new SqliteDatabase(':memory:');
    try {
      database.exec(`create table t (id integer primary key, name text, score real, data blob, note text);
        insert into t values (1, 'a', 1.5, x'00ff', null), (2, 'b"\\', -2.25, null, 'n');`);
      const queries = [
        'select * from t order by id',
        'select id, name, id as name, count(*) over () as "count(*)", json_object(\'k\', name) as "weird ""key""" from t',
        'select 1 where 0',
      ];
      for (const text of queries) {
        const expected = database.prepare(text).all();
        const built = withRowBuilder(database.prepare(text));
        expect(built.all()).toEqual(expected);
        expect([...built.iterate()]).toEqual(expected);
        // The same hidden shape as a literal: own, enumerable, in column order.
        for (const row of built.all() as object[]) expect(Object.keys(row)).toEqual(Object.keys(expected[0] as object));
      }
      // A writer that returns rows is a reader; one that does not is handed back as it is.
      const returning = withRowBuilder(database.prepare('insert into t (name) values (?) returning id, name'));
      expect(returning.all(['c'])).toEqual([{ id: 3, name: 'c' }]);
      const plain = database.prepare('delete from t where id = ?');
      expect(withRowBuilder(plain)).toBe(plain);
      // `__proto__` would set a literal's prototype: better-sqlite3 builds those rows itself.
      const proto = database.prepare('select 1 as "__proto__"');
      expect(withRowBuilder(proto)).toBe(proto);
    } finally {
      database.close();
    }
  });
});
