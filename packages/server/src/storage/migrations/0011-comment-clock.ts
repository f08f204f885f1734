import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Each owner's comment clock (docs/api.md, "Comments"; docs/decisions/0029-comment-clock-and-floods.md): the last
 * `created_at` given to a comment on any of the owner's drops. A new comment takes one above it (or the time, when
 * later), under the lock of that row, so comments of one owner get strictly increasing times in commit order on
 * every database, even on different drops at once, and after the newest comment was deleted. Starts at the newest
 * comment each account already has.
 */
export const commentClock: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('accounts')
      .addColumn('comment_clock', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`UPDATE accounts SET comment_clock = COALESCE(
      (SELECT MAX(comments.created_at) FROM comments WHERE comments.account_id = accounts.id), 0)`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').dropColumn('comment_clock').execute();
  },
};
