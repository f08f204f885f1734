/**
 * Migration 0011 (docs/decisions/0029-comment-clock-and-floods.md) on every dialect: each account's comment clock
 * starts at its newest comment, comments after the upgrade continue above it, and the migration goes down cleanly.
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, openAtMigration, type TestDatabase } from '../../test/databases.js';
import { newContentLabel } from '../domain/content-origin.js';
import type { NewComment, Store } from '../domain/store.js';
import { columnsOf } from './migrations/columns.js';

type Loose = Kysely<Record<string, Record<string, unknown>>>;

const T0 = Date.UTC(2026, 10, 21, 12);

/** Two accounts; ann has two drops with comments, bob none. */
async function seed(store: Store): Promise<{ ann: string; bob: string; slugs: string[] }> {
  const ann = (await store.ensureAccount({ provider: 'local', subject: 'ann', login: 'ann' }, 'u_ann0000000000000', T0))
    .id;
  const bob = (await store.ensureAccount({ provider: 'local', subject: 'bob', login: 'bob' }, 'u_bob0000000000000', T0))
    .id;
  const slugs = ['clocka01', 'clockb01'];
  for (const slug of slugs) {
    const drop = {
      slug,
      accountId: ann,
      title: 't',
      description: null,
      html: '<p>x</p>',
      sizeBytes: 8,
      contentLabel: newContentLabel(),
      context: null,
      metadata: {},
      passcodeHash: null,
      now: T0,
    };
    await store.createDrop(drop, 10);
  }
  return { ann, bob, slugs };
}

const note = (slug: string, id: string, now: number): NewComment => ({
  id,
  slug,
  version: undefined,
  body: id,
  quote: null,
  authorName: 'g',
  authorKind: 'guest',
  authorAccountId: null,
  now,
});

async function clocks(database: TestDatabase): Promise<Record<string, number>> {
  const db = (await openAtMigration(database, '0011-comment-clock')) as unknown as Loose;
  try {
    const rows = await db.selectFrom('accounts').select(['id', 'comment_clock']).execute();
    return Object.fromEntries(rows.map((row) => [String(row.id), Number(row.comment_clock)]));
  } finally {
    await db.destroy();
  }
}

for (const dialect of DIALECTS) {
  describe(`migration 0011 on ${dialect}`, () => {
    it('starts each clock at the account’s newest comment; later comments continue above it; down drops it', async () => {
      const database = await createTestDatabase(dialect);
      try {
        let store = database.open();
        await store.migrate();
        const { ann, bob, slugs } = await seed(store);
        const [a, b] = slugs as [string, string];
        await store.addComment(note(a, 'c_one', T0 + 5_000), 100);
        await store.addComment(note(b, 'c_two', T0 + 9_000), 100);
        await store.addComment(note(a, 'c_three', T0 + 7_000), 100);
        await store.close();

        // Back to 0010: the column goes; then up again, as an upgrade from 0010 runs it.
        const down = (await openAtMigration(database, '0010-version-bodies')) as unknown as Loose;
        expect([...(await columnsOf(down as unknown as Kysely<unknown>, 'accounts'))]).not.toContain('comment_clock');
        await down.destroy();
        expect(await clocks(database)).toEqual({ [ann]: T0 + 9_001, [bob]: 0 });

        store = database.open();
        await store.migrate();
        const next = await store.addComment(note(a, 'c_four', T0), 100);
        expect(next).toMatchObject({ createdAt: T0 + 9_002 });
        await store.close();
      } finally {
        await database.drop();
      }
    });
  });
}
