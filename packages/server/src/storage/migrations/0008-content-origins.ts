import type { Kysely, Migration } from 'kysely';
import { newContentLabel } from '../../domain/content-origin.js';

/** Rows labelled per statement while giving existing drops their content label. */
const BATCH = 500;

/**
 * Step 7 of the roadmap, each drop on its own origin (docs/api.md, "Each drop on its own origin"): the drop's
 * content label (the `{id}` of its host name, unique) and its network policy. Existing drops get a fresh random
 * label here, so every drop has one from this migration on; labels are never derived from slugs.
 */
export const contentOrigins: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('drops').addColumn('content_label', 'text').execute();
    /** `open`, `none`, or a JSON array of origins (domain/network.ts). */
    await db.schema
      .alterTable('drops')
      .addColumn('network', 'text', (c) => c.notNull().defaultTo('open'))
      .execute();
    const drops = db as unknown as Kysely<{ drops: { slug: string; content_label: string | null } }>;
    for (;;) {
      const rows = await drops
        .selectFrom('drops')
        .select('slug')
        .where('content_label', 'is', null)
        .limit(BATCH)
        .execute();
      if (rows.length === 0) break;
      for (const { slug } of rows) {
        await drops.updateTable('drops').set({ content_label: newContentLabel() }).where('slug', '=', slug).execute();
      }
    }
    await db.schema.createIndex('drops_content_label').on('drops').column('content_label').unique().execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('drops_content_label').execute();
    await db.schema.alterTable('drops').dropColumn('network').execute();
    await db.schema.alterTable('drops').dropColumn('content_label').execute();
  },
};
