/**
 * Versions' screenshots over Kysely (migration 0018; docs/decisions/0038-previews-and-embeds.md): a row per version
 * pointing at a stored body of the PNG's bytes (kept as they are: PNG does not compress), counted in `bodies.refs`
 * like a version's HTML, and deleted with its version by deleteVersionRows (kysely/bodies.ts).
 */
import type { Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import { decodeBodyBytes, encodeFileSync } from '../bodies.js';
import type { Database } from '../schema.js';
import { keepBody } from './bodies.js';
import { inTransaction } from './shared.js';

export type PreviewStorePart = Pick<Store, 'findPreview' | 'keepPreview'>;

export function previewStore(db: Kysely<Database>): PreviewStorePart {
  return {
    async findPreview(slug, version) {
      const row = await db
        .selectFrom('version_previews')
        .innerJoin('bodies', 'bodies.hash', 'version_previews.body_hash')
        .select(['bodies.hash', 'bodies.codec', 'bodies.data'])
        .where('version_previews.slug', '=', slug)
        .where('version_previews.version', '=', version)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return { png: await decodeBodyBytes(row.codec, row.data), sha256: row.hash };
    },

    keepPreview(slug, version, png, now) {
      const body = encodeFileSync({ bytes: png, compress: false });
      return inTransaction<boolean, never>(db, async (trx) => {
        // The drop's row lock first (the order of kysely/bodies.ts): no delete of the version can run meanwhile.
        const locked = await trx
          .updateTable('drops')
          .set((eb) => ({ updated_at: eb.ref('updated_at') }))
          .where('slug', '=', slug)
          .executeTakeFirst();
        if (locked.numUpdatedRows === 0n) return false;
        const exists = await trx
          .selectFrom('versions')
          .select('version')
          .where('slug', '=', slug)
          .where('version', '=', version)
          .executeTakeFirst();
        if (exists === undefined) return false;
        const kept = await trx
          .selectFrom('version_previews')
          .select('version')
          .where('slug', '=', slug)
          .where('version', '=', version)
          .executeTakeFirst();
        if (kept !== undefined) return false;
        await keepBody(trx, body);
        await trx
          .insertInto('version_previews')
          .values({ slug, version, body_hash: body.hash, created_at: now })
          .execute();
        return true;
      });
    },
  };
}
