/**
 * Migration 0010 (docs/decisions/0027-compressed-deduplicated-bodies.md) on every dialect: versions stored whole by
 * earlier releases move into shared, compressed bodies with exact contents and counts, also when a previous run of
 * the migration stopped half way (SQLite commits batch by batch).
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, openAtMigration, type TestDatabase } from '../../test/databases.js';
import { bodyHash, decodeBody, encodeBody } from './bodies.js';
import { columnsOf } from './migrations/columns.js';

type Loose = Kysely<Record<string, Record<string, unknown>>>;

const SHARED = `<!doctype html><title>shared</title>${'<p>the same report, published again</p>'.repeat(300)}`;
const UNIQUE = (i: number) => `<!doctype html><p>version ${i} é 漢字 😀</p>${'<td>42</td>'.repeat(50 * i)}`;

/** An account, three drops and versions as release 0008 stored them: two drops share their first version's HTML. */
async function seedBefore(db: Loose): Promise<Array<{ slug: string; version: number; html: string }>> {
  await db
    .insertInto('accounts')
    .values({ id: 'u_old', provider: 'local', subject: 'old', login: 'old', created_at: 1, drop_count: 3 })
    .execute();
  const versions = [
    { slug: 'olda', version: 1, html: SHARED },
    { slug: 'olda', version: 2, html: UNIQUE(1) },
    { slug: 'oldb', version: 1, html: SHARED },
    { slug: 'oldb', version: 3, html: SHARED },
    { slug: 'oldc', version: 1, html: UNIQUE(2) },
    ...Array.from({ length: 45 }, (_, i) => ({ slug: 'oldc', version: i + 2, html: UNIQUE(i + 3) })),
  ];
  for (const slug of ['olda', 'oldb', 'oldc']) {
    const own = versions.filter((v) => v.slug === slug);
    const latest = Math.max(...own.map((v) => v.version));
    await db
      .insertInto('drops')
      .values({
        slug,
        account_id: 'u_old',
        title: 't',
        description: null,
        passcode_hash: null,
        latest_version: latest,
        last_issued_version: latest,
        version_count: own.length,
        metadata: '{}',
        created_at: 1,
        updated_at: 1,
        content_label: `label${slug}`,
      })
      .execute();
  }
  for (const v of versions) {
    await db
      .insertInto('versions')
      .values({ ...v, size_bytes: Buffer.byteLength(v.html), context: null, created_at: 1 })
      .execute();
  }
  return versions;
}

async function expectConverted(
  database: TestDatabase,
  versions: Array<{ slug: string; version: number; html: string }>,
) {
  const store = database.open();
  await store.migrate();
  try {
    for (const v of versions) expect((await store.getVersionContent(v.slug, v.version))?.html).toBe(v.html);
    expect((await store.listVersions('olda')).map((v) => v.sizeBytes)).toEqual([
      Buffer.byteLength(UNIQUE(1)),
      Buffer.byteLength(SHARED),
    ]);
  } finally {
    await store.close();
  }
  const db = (await openAtMigration(database, '0010-version-bodies')) as unknown as Loose;
  try {
    const bodies = await db.selectFrom('bodies').selectAll().execute();
    expect(bodies).toHaveLength(versions.length - 2);
    const shared = bodies.find((b) => b.hash === bodyHash(Buffer.from(SHARED)));
    expect(Number(shared?.refs)).toBe(3);
    for (const body of bodies) {
      const html = await decodeBody(String(body.codec), body.data as Uint8Array);
      expect(bodyHash(Buffer.from(html))).toBe(body.hash);
    }
    expect([...(await columnsOf(db as unknown as Kysely<unknown>, 'versions'))]).not.toContain('html');
  } finally {
    await db.destroy();
  }
}

for (const dialect of DIALECTS) {
  describe(`migration 0010 on ${dialect}`, () => {
    it('moves every version into shared compressed bodies, verified, with exact reference counts', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const db = (await openAtMigration(database, '0008-content-origins')) as unknown as Loose;
        const versions = await seedBefore(db);
        await db.destroy();
        await expectConverted(database, versions);
      } finally {
        await database.drop();
      }
    });
  });
}

describe('migration 0010 on sqlite, cut short', () => {
  it('resumes where a crash left it: converted batches stay, the rest is converted, counts are exact', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const db = (await openAtMigration(database, '0008-content-origins')) as unknown as Loose;
      const versions = await seedBefore(db);
      // What one committed batch leaves behind: the table, the column, and two versions (one shared) converted.
      await db.schema
        .createTable('bodies')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('codec', 'text', (c) => c.notNull())
        .addColumn('data', 'blob', (c) => c.notNull())
        .addColumn('size_bytes', 'integer', (c) => c.notNull())
        .addColumn('refs', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('versions').addColumn('body_hash', 'text').execute();
      for (const [slug, version, html, refs] of [
        ['olda', 1, SHARED, 1],
        ['olda', 2, UNIQUE(1), 1],
      ] as const) {
        const body = await encodeBody(html);
        await db
          .insertInto('bodies')
          .values({ hash: body.hash, codec: body.codec, data: body.data, size_bytes: body.sizeBytes, refs })
          .execute();
        await db
          .updateTable('versions')
          .set({ body_hash: body.hash, html: '' })
          .where('slug', '=', slug)
          .where('version', '=', version)
          .execute();
      }
      await db.destroy();
      await expectConverted(database, versions);
    } finally {
      await database.drop();
    }
  });
});
