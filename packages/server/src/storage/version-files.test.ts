/**
 * Migration 0013 (docs/decisions/0033-many-files-in-one-drop.md) on every dialect: versions stored before it keep
 * their HTML and have no files; files published after it are counted in `bodies`; going down releases exactly the
 * files' uses of their bodies (a body also used as HTML stays), and going up again works.
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, openAtMigration, openMigrated } from '../../test/databases.js';
import { newContentLabel } from '../domain/content-origin.js';
import type { NewDrop, Store } from '../domain/store.js';
import { bodyHash } from './bodies.js';
import { tableNames } from './migrations/columns.js';

type Loose = Kysely<Record<string, Record<string, unknown>>>;

const T0 = Date.UTC(2026, 10, 21, 12);
const HTML = '<!doctype html><p>the entry, also published as a file</p>';
const CSS = 'body{margin:0}';

const drop = (accountId: string, slug: string, overrides: Partial<NewDrop> = {}): NewDrop => ({
  slug,
  accountId,
  title: 't',
  description: null,
  html: HTML,
  sizeBytes: Buffer.byteLength(HTML),
  contentLabel: newContentLabel(),
  context: null,
  metadata: {},
  passcodeHash: null,
  now: T0,
  ...overrides,
});

const refsOf = async (db: Loose) =>
  Object.fromEntries(
    (await db.selectFrom('bodies').select(['hash', 'refs']).execute()).map((r) => [String(r.hash), Number(r.refs)]),
  );

async function account(store: Store): Promise<string> {
  return (await store.ensureAccount({ provider: 'local', subject: 'ann', login: 'ann' }, 'u_ann0000000000000', T0)).id;
}

for (const dialect of DIALECTS) {
  describe(`migration 0013 on ${dialect}`, () => {
    it('leaves earlier versions without files, counts new files, and goes down and up again cleanly', async () => {
      const database = await createTestDatabase(dialect);
      try {
        // A drop whose version is older than files: stored, then the schema taken back to before 0013 (today's store
        // writes tables of later migrations too), and up again.
        let store = database.open();
        await store.migrate();
        const ann = await account(store);
        await store.createDrop(drop(ann, 'oldone01'), 10);
        await store.close();
        const before = (await openAtMigration(database, '0011-comment-clock')) as unknown as Loose;
        expect(await tableNames(before as unknown as Kysely<unknown>)).not.toContain('version_files');
        await before.destroy();
        store = database.open();
        await store.migrate();
        const files = [
          { path: 'style.css', contentType: 'text/css; charset=utf-8', bytes: Buffer.from(CSS) },
          { path: 'copy.html', contentType: 'text/html; charset=utf-8', bytes: Buffer.from(HTML) },
        ];
        await store.createDrop(drop(ann, 'newone01', { files }), 10);
        expect((await store.listVersionFiles('oldone01')).size).toBe(0);
        expect((await store.listVersionFiles('newone01')).get(1)?.map((f) => f.path)).toEqual([
          'copy.html',
          'style.css',
        ]);
        await store.close();

        const html = bodyHash(Buffer.from(HTML));
        const css = bodyHash(Buffer.from(CSS));
        const down = (await openAtMigration(database, '0011-comment-clock')) as unknown as Loose;
        const tables = await tableNames(down as unknown as Kysely<unknown>);
        expect(tables).not.toContain('version_files');
        // The HTML of both drops stays counted; the files' uses are gone, and a body only a file used with them.
        expect(await refsOf(down)).toEqual({ [html]: 2 });
        expect(css in (await refsOf(down))).toBe(false);
        await down.destroy();

        store = database.open();
        await store.migrate();
        await store.appendVersion(
          'oldone01',
          { html: HTML, sizeBytes: Buffer.byteLength(HTML), context: null, files, now: T0 },
          {},
          10,
        );
        expect((await store.getVersionFile('oldone01', undefined, 'style.css'))?.bytes.toString()).toBe(CSS);
        await store.close();
        const up = (await openMigrated(database)) as unknown as Loose;
        expect(await refsOf(up)).toEqual({ [html]: 4, [css]: 1 });
        await up.destroy();
      } finally {
        await database.drop();
      }
    });
  });
}
