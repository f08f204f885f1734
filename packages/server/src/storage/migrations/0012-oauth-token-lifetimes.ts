import { type Kysely, type Migration, sql } from 'kysely';
import { columnsOf } from './columns.js';

/**
 * Expiring OAuth tokens with rotating refresh tokens (docs/api.md, "Remote MCP and OAuth";
 * docs/decisions/0030-expiring-oauth-tokens-with-rotating-refresh.md). A token row gains:
 * - `expires_at`: when the `hd_` access token stops working (null: never, as device-flow and operator tokens);
 * - `oauth_client_id`: the OAuth client it was issued to (null for the others);
 * - `refresh_hash`, `refresh_expires_at`: the SHA-256 of the refresh token issued with it, and until when it may be
 *   exchanged (once: a refresh revokes the row and inserts its successor);
 * - `family_id`: the grant, shared by a row and all its successors (the id of the first), so that the reuse of a
 *   spent refresh token, or a revocation, ends the whole grant.
 * Tokens issued through OAuth before this migration keep not expiring; the client they went to is filled in from
 * their code while the code is kept (a day).
 *
 * SQLite runs migrations outside a transaction: each step checks what is already there, so a migration cut short by
 * a crash completes on the next start.
 */
export const oauthTokenLifetimes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const transactional = db.getExecutor().adapter.supportsTransactionalDdl;
    const columns = transactional ? new Set<string>() : await columnsOf(db, 'tokens');
    for (const [name, type] of [
      ['expires_at', 'bigint'],
      ['oauth_client_id', 'text'],
      ['refresh_hash', 'text'],
      ['refresh_expires_at', 'bigint'],
      ['family_id', 'text'],
    ] as const) {
      if (!columns.has(name)) await db.schema.alterTable('tokens').addColumn(name, type).execute();
    }
    await db.schema
      .createIndex('tokens_refresh_hash')
      .ifNotExists()
      .on('tokens')
      .column('refresh_hash')
      .unique()
      .execute();
    await db.schema.createIndex('tokens_family').ifNotExists().on('tokens').column('family_id').execute();
    await db.schema
      .createIndex('tokens_oauth_client')
      .ifNotExists()
      .on('tokens')
      .columns(['account_id', 'oauth_client_id'])
      .execute();
    await sql`update tokens set oauth_client_id = (select c.client_id from oauth_codes c where c.token_id = tokens.id)
      where oauth_client_id is null and id in (select token_id from oauth_codes where token_id is not null)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('tokens_oauth_client').execute();
    await db.schema.dropIndex('tokens_family').execute();
    await db.schema.dropIndex('tokens_refresh_hash').execute();
    for (const name of ['family_id', 'refresh_expires_at', 'refresh_hash', 'oauth_client_id', 'expires_at']) {
      await db.schema.alterTable('tokens').dropColumn(name).execute();
    }
  },
};
