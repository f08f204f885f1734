/** The SQLite dialect's own parts (sqlite.ts) beyond group commit (sqlite-durability.test.ts). */
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/temp.js';
import { openSqliteFile } from './sqlite.js';

describe('the SQLite dialect', () => {
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
});
