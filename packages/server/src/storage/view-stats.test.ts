/**
 * The read-receipt part of the storage conformance suite (see store.test.ts): Store.addViews and Store.getDropStats
 * against every dialect on a real database. Batches of several instances add up, viewers count once, concurrent
 * flushes do not deadlock, and deleted versions and drops take their statistics with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/databases.js';
import { newContentLabel } from '../domain/content-origin.js';
import type { NewDrop, Store } from '../domain/store.js';
import type { Account, ViewBatch, ViewTally } from '../domain/types.js';
import type { Dialect } from './dialect.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

const T0 = Date.UTC(2026, 10, 21, 12);

/** Renders of one version in a flush: `views` renders between `firstAt` and `lastAt` by `viewers`. */
const tally = (views: number, firstAt: number, lastAt: number, viewers: readonly string[]): ViewTally => ({
  views,
  firstAt,
  lastAt,
  viewers: new Set(viewers),
});

/** A flush: [slug, version, tally] triples. */
function batchOf(...entries: Array<[string, number, ViewTally]>): ViewBatch {
  const batch = new Map<string, Map<number, ViewTally>>();
  for (const [slug, version, t] of entries) batch.set(slug, (batch.get(slug) ?? new Map()).set(version, t));
  return batch;
}

for (const dialect of DIALECTS) {
  describe(`Read receipts in the Store on ${dialect}`, () => {
    let database: TestDatabase;
    let store: Store;
    let account: Account;
    let n = 0;

    beforeAll(async () => {
      database = await createTestDatabase(dialect);
      store = database.open();
      await store.migrate();
      account = await store.ensureAccount(
        { provider: 'local', subject: 'ann', login: 'ann' },
        'u_ann0000000000000',
        T0,
      );
    });
    afterAll(async () => {
      await store.close();
      await database.drop();
    });

    const newDrop = (accountId: string): NewDrop => ({
      slug: `r${dialect[0]}${(n++).toString().padStart(8, '0')}`,
      accountId,
      contentLabel: newContentLabel(),
      title: 't',
      description: null,
      html: '<p>x</p>',
      sizeBytes: 8,
      context: null,
      metadata: {},
      passcodeHash: null,
      now: T0 + n,
    });

    /** The database under the store, to see rows the Store contract does not show. */
    function openRaw(): Dialect {
      return dialect === 'sqlite' ? openSqlite(database.dataDir) : openPostgres(database.databaseUrl ?? '');
    }

    it('adds read receipts from the batches of two instances, counting each viewer once', async () => {
      const other = database.open();
      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      await store.appendVersion(slug, { html: 'v2', sizeBytes: 2, context: null, now: T0 }, {}, 10);
      expect(await store.getDropStats(slug)).toEqual({
        views: 0,
        uniqueViewers: 0,
        firstViewedAt: null,
        lastViewedAt: null,
        versions: [2, 1].map((version) => ({
          version,
          views: 0,
          uniqueViewers: 0,
          firstViewedAt: null,
          lastViewedAt: null,
        })),
      });
      const fromA = batchOf(
        [slug, 1, tally(3, T0 + 10, T0 + 20, ['a', 'b'])],
        [slug, 2, tally(1, T0 + 30, T0 + 30, ['a'])],
      );
      const fromB = batchOf([slug, 1, tally(2, T0 + 5, T0 + 15, ['b', 'c'])]);
      // SQLite has one writer, and better-sqlite3 waits for a lock synchronously: two connections of one process
      // writing at once would stall each other, so the instances take turns there.
      if (dialect === 'postgres') await Promise.all([store.addViews(fromA), other.addViews(fromB)]);
      else await store.addViews(fromA).then(() => other.addViews(fromB));
      const expected = {
        views: 6,
        uniqueViewers: 3,
        firstViewedAt: T0 + 5,
        lastViewedAt: T0 + 30,
        versions: [
          { version: 2, views: 1, uniqueViewers: 1, firstViewedAt: T0 + 30, lastViewedAt: T0 + 30 },
          { version: 1, views: 5, uniqueViewers: 3, firstViewedAt: T0 + 5, lastViewedAt: T0 + 20 },
        ],
      };
      expect(await store.getDropStats(slug)).toEqual(expected);
      expect(await other.getDropStats(slug)).toEqual(expected);
      expect((await store.findDrop(slug))?.viewCount).toBe(6);
      expect(await store.getDropStats('nope')).toBeUndefined();
      await other.close();
    });

    it('writes large batches, and concurrent flushes over several drops in any order without deadlock', async () => {
      const [x, y] = [
        await store.createDrop(newDrop(account.id), 1000),
        await store.createDrop(newDrop(account.id), 1000),
      ];
      const [sx, sy] = [x?.slug ?? '', y?.slug ?? ''];
      const many = Array.from({ length: 1200 }, (_, i) => `viewer-${i}`);
      await store.addViews(batchOf([sx, 1, tally(1200, T0, T0 + 1, many)]));
      expect(await store.getDropStats(sx)).toMatchObject({ views: 1200, uniqueViewers: 1200 });
      const others = dialect === 'postgres' ? [database.open(), database.open()] : [store, store];
      const flushes = Array.from({ length: 10 }, (_, i) => {
        const entries: Array<[string, number, ViewTally]> = [
          [sx, 1, tally(1, T0 + i, T0 + i, [`v${i % 3}`])],
          [sy, 1, tally(2, T0 + i, T0 + i, [`v${i % 4}`])],
        ];
        return (others[i % 2] ?? store).addViews(batchOf(...(i % 2 === 0 ? entries : entries.reverse())));
      });
      await Promise.all(flushes);
      expect(await store.getDropStats(sx)).toMatchObject({ views: 1210, uniqueViewers: 1203 });
      expect(await store.getDropStats(sy)).toMatchObject({ views: 20, uniqueViewers: 4 });
      if (dialect === 'postgres') await Promise.all(others.map((o) => o.close()));
    });

    it('removes the read receipts of a deleted version and of a deleted drop, and drops renders of either', async () => {
      const raw = openRaw();
      const rows = async (table: 'drop_views' | 'drop_viewers' | 'version_views' | 'version_viewers', slug: string) =>
        Number(
          (
            await raw.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .where('slug', '=', slug)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      await store.appendVersion(slug, { html: 'v2', sizeBytes: 2, context: null, now: T0 }, {}, 10);
      await store.addViews(
        batchOf([slug, 1, tally(2, T0, T0 + 1, ['a', 'b'])], [slug, 2, tally(1, T0 + 2, T0 + 2, ['c'])]),
      );
      expect(await rows('version_viewers', slug)).toBe(3);
      expect(await store.deleteVersion(slug, 1, T0)).toMatchObject({ viewCount: 3 });
      expect(await rows('version_views', slug)).toBe(1);
      expect(await rows('version_viewers', slug)).toBe(1);
      // A batch holding renders of the deleted version (flushed late): the drop counts them, the version is not back.
      await store.addViews(batchOf([slug, 1, tally(1, T0 + 3, T0 + 3, ['d'])]));
      expect(await store.getDropStats(slug)).toEqual({
        views: 4,
        uniqueViewers: 4,
        firstViewedAt: T0,
        lastViewedAt: T0 + 3,
        versions: [{ version: 2, views: 1, uniqueViewers: 1, firstViewedAt: T0 + 2, lastViewedAt: T0 + 2 }],
      });
      expect(await rows('version_views', slug)).toBe(1);

      expect(await store.deleteDrop(slug)).toBe(true);
      for (const table of ['drop_views', 'drop_viewers', 'version_views', 'version_viewers'] as const) {
        expect(await rows(table, slug), table).toBe(0);
      }
      await store.addViews(batchOf([slug, 2, tally(1, T0 + 4, T0 + 4, ['e'])]));
      expect(await store.getDropStats(slug)).toBeUndefined();
      expect(await rows('drop_viewers', slug)).toBe(0);
      await raw.db.destroy();
    });
  });
}
