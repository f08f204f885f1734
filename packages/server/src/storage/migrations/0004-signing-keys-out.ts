import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Removes the signing keys earlier versions kept in `settings`: keys now live outside the database, so a copy of
 * the database cannot forge capabilities or sessions (docs/decisions/0019-signing-keys-outside-the-database.md).
 * Capabilities and /verify sessions signed with the old keys stop working: visitors enter the passcode again.
 */
export const signingKeysOut: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`DELETE FROM settings WHERE key IN ('capability_key', 'session_key')`.execute(db);
  },
  async down(): Promise<void> {
    // Nothing to restore: the old keys are gone on purpose, and the code before this migration makes new ones.
  },
};
