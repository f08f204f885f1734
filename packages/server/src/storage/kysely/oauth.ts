/**
 * OAuth clients and authorization codes over Kysely (docs/api.md, "Remote MCP and OAuth"). Each method's atomicity
 * is stated on it in domain/store.ts.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { CodeRedemption, OAuthClient } from '../../domain/types.js';
import type { Database, OAuthClientsTable } from '../schema.js';
import { inTransaction } from './shared.js';

export type OAuthStore = Pick<
  Store,
  'registerOAuthClient' | 'findOAuthClient' | 'createOAuthCode' | 'findOAuthCode' | 'redeemOAuthCode' | 'purgeOAuth'
>;

const toClient = (row: Selectable<OAuthClientsTable>): OAuthClient => ({
  id: row.id,
  name: row.name,
  redirectUris: Object.freeze(JSON.parse(row.redirect_uris) as string[]),
  metadata: Object.freeze(JSON.parse(row.metadata) as Record<string, unknown>),
  createdAt: Number(row.created_at),
});

export function oauthStore(db: Kysely<Database>): OAuthStore {
  return {
    async registerOAuthClient(client) {
      await db
        .insertInto('oauth_clients')
        .values({
          id: client.id,
          name: client.name,
          redirect_uris: JSON.stringify(client.redirectUris),
          metadata: JSON.stringify(client.metadata),
          created_at: client.createdAt,
          last_used_at: null,
        })
        .execute();
    },
    async findOAuthClient(id) {
      const row = await db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toClient(row);
    },
    createOAuthCode: createOAuthCode(db),
    async findOAuthCode(hash) {
      const row = await db.selectFrom('oauth_codes').selectAll().where('hash', '=', hash).executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        clientId: row.client_id,
        accountId: row.account_id,
        codeChallenge: row.code_challenge,
        redirectUri: row.redirect_uri,
        resource: row.resource,
        expiresAt: Number(row.expires_at),
        usedAt: row.used_at === null ? null : Number(row.used_at),
      };
    },
    redeemOAuthCode: redeemOAuthCode(db),
    async purgeOAuth({ codesBefore, unusedClientsBefore }) {
      await db.deleteFrom('oauth_codes').where('expires_at', '<', codesBefore).execute();
      await db
        .deleteFrom('oauth_clients')
        .where('last_used_at', 'is', null)
        .where('created_at', '<', unusedClientsBefore)
        .execute();
    },
  };
}

function createOAuthCode(db: Kysely<Database>): Store['createOAuthCode'] {
  return (code) =>
    inTransaction<void, never>(db, async (trx) => {
      await trx
        .insertInto('oauth_codes')
        .values({
          hash: code.hash,
          client_id: code.clientId,
          account_id: code.accountId,
          code_challenge: code.codeChallenge,
          redirect_uri: code.redirectUri,
          resource: code.resource,
          created_at: code.now,
          expires_at: code.expiresAt,
          used_at: null,
          token_id: null,
        })
        .execute();
      await trx.updateTable('oauth_clients').set({ last_used_at: code.now }).where('id', '=', code.clientId).execute();
    });
}

function redeemOAuthCode(db: Kysely<Database>): Store['redeemOAuthCode'] {
  return (hash, clientId, token, now) =>
    inTransaction<CodeRedemption, never>(db, async (trx) => {
      const won = await trx
        .updateTable('oauth_codes')
        .set({ used_at: now, token_id: token.id })
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('account_id')
        .executeTakeFirst();
      if (won !== undefined) {
        await trx
          .insertInto('tokens')
          .values({
            id: token.id,
            hash: token.hash,
            account_id: won.account_id,
            label: token.label,
            created_at: now,
            last_used_at: null,
            revoked_at: null,
          })
          .execute();
        return { kind: 'issued', accountId: won.account_id };
      }
      const used = await trx
        .selectFrom('oauth_codes')
        .select('token_id')
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .where('used_at', 'is not', null)
        .executeTakeFirst();
      if (used === undefined) return { kind: 'invalid' };
      if (used.token_id !== null) {
        await trx
          .updateTable('tokens')
          .set({ revoked_at: now })
          .where('id', '=', used.token_id)
          .where('revoked_at', 'is', null)
          .execute();
      }
      return { kind: 'replayed' };
    });
}
