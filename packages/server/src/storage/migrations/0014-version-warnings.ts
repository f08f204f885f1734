import type { Kysely, Migration } from 'kysely';

/**
 * What the look before publishing found in each version (docs/api.md, "A look before publishing"): one row per
 * version that has findings, holding them masked as JSON (`[{kind, rule, where, line, excerpt}]`, never a secret).
 * A clean version has no row. The row goes with its version, and so with its drop.
 */
export const versionWarnings: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('version_warnings')
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('findings', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('version_warnings_pk', ['slug', 'version'])
      .addForeignKeyConstraint('version_warnings_version', ['slug', 'version'], 'versions', ['slug', 'version'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('version_warnings').execute();
  },
};
