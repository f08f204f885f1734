import type { Kysely, Migration } from 'kysely';

/** Service-wide settings shared by every instance (e.g. the capability signing key). */
export const settings: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('settings').execute();
  },
};
