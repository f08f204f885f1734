import type { Kysely, Migration } from 'kysely';

/**
 * OAuth for remote MCP clients (docs/api.md, "Remote MCP and OAuth"): the clients that registered themselves
 * (RFC 7591) and the one-time authorization codes a human's approval issues. No secret is stored: every client is
 * public and proves itself with PKCE; a code is kept as its SHA-256 hash. A code goes with its client.
 */
export const oauth: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema
      .createTable('oauth_codes')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('resource', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('token_id', 'text')
      .execute();
    await db.schema.createIndex('oauth_codes_expires').on('oauth_codes').column('expires_at').execute();
    await db.schema.createIndex('oauth_codes_client').on('oauth_codes').column('client_id').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('oauth_codes').execute();
    await db.schema.dropTable('oauth_clients').execute();
  },
};
