/** Group commit on SQLite (sqlite-durability.ts): which connection uses wait for a flush of the WAL, and sharing it. */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/temp.js';
import { createWalFlusher, GroupCommitSqliteDialect, type WalFlusher } from './sqlite-durability.js';

function counted(): WalFlusher & { calls: number } {
  const flusher = {
    calls: 0,
    flush: async () => {
      flusher.calls++;
    },
    close: async () => undefined,
  };
  return flusher;
}

function openWith(flusher: WalFlusher, state = { lazy: false }) {
  const database = new SqliteDatabase(path.join(tempDir(), 'd.sqlite'));
  database.pragma('journal_mode = WAL');
  const db = new Kysely<{ t: { a: number } }>({ dialect: new GroupCommitSqliteDialect({ database }, flusher, state) });
  return { db, state };
}

describe('group commit on SQLite', () => {
  it('flushes after a use that wrote, not after reads, and not after a lazy transaction', async () => {
    const flusher = counted();
    const { db, state } = openWith(flusher);
    await sql`create table t (a integer)`.execute(db);
    expect(flusher.calls).toBe(1);
    await db.insertInto('t').values({ a: 1 }).execute();
    await db.transaction().execute((trx) => trx.insertInto('t').values({ a: 2 }).execute());
    expect(flusher.calls).toBe(3);
    await db.selectFrom('t').selectAll().execute();
    await db.transaction().execute((trx) => trx.selectFrom('t').selectAll().execute());
    expect(flusher.calls).toBe(3);
    await db.connection().execute((connection) => {
      state.lazy = true;
      return connection.transaction().execute((trx) => trx.insertInto('t').values({ a: 3 }).execute());
    });
    expect(flusher.calls).toBe(3);
    await db.insertInto('t').values({ a: 4 }).execute();
    expect(flusher.calls).toBe(4);
    await db.destroy();
  });

  it('answers every waiter with a flush that began after it asked, sharing flushes among concurrent writers', async () => {
    const file = path.join(tempDir(), 'wal');
    fs.writeFileSync(file, 'frames');
    const flusher = createWalFlusher(file);
    await Promise.all(Array.from({ length: 20 }, () => flusher.flush()));
    await flusher.flush();
    await flusher.close();
  });

  it('rejects the waiters when the WAL cannot be flushed', async () => {
    const flusher = createWalFlusher(path.join(tempDir(), 'missing-wal'));
    await expect(flusher.flush()).rejects.toThrow(/ENOENT/);
    await flusher.close();
  });
});
