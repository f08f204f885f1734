/**
 * OAuth clients and authorization codes over Kysely (docs/api.md, "Remote MCP and OAuth"). Each method's atomicity
 * is stated on it in domain/store.ts.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { CodeRedemption, NewOAuthToken, OAuthClient, TokenRefresh } from '../../domain/types.js';
import type { Database, OAuthClientsTable } from '../schema.js';
import { inTransaction } from './shared.js';

export type OAuthStore = Pick<
  Store,
  | 'registerOAuthClient'
  | 'findOAuthClient'
  | 'createOAuthCode'
  | 'findOAuthCode'
  | 'redeemOAuthCode'
  | 'refreshOAuthToken'
  | 'revokeOAuthToken'
  | 'purgeOAuth'
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
    refreshOAuthToken: refreshOAuthToken(db),
    revokeOAuthToken: revokeOAuthToken(db),
    async purgeOAuth({ codesBefore, unusedClientsBefore, tokensBefore }) {
      await db.deleteFrom('oauth_codes').where('expires_at', '<', codesBefore).execute();
      // Rows whose refresh token expired can neither be used nor renewed; a reuse of one is then just unknown.
      await db
        .deleteFrom('tokens')
        .where('oauth_client_id', 'is not', null)
        .where('refresh_expires_at', '<', tokensBefore)
        .execute();
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

/** Stores a token issued through OAuth: the access token, its refresh token, its client and its grant. */
async function insertOAuthToken(
  trx: Transaction<Database>,
  token: NewOAuthToken,
  owner: { accountId: string; clientId: string; label: string | null; familyId: string; now: number },
): Promise<void> {
  await trx
    .insertInto('tokens')
    .values({
      id: token.id,
      hash: token.hash,
      account_id: owner.accountId,
      label: owner.label,
      created_at: owner.now,
      last_used_at: null,
      revoked_at: null,
      expires_at: token.expiresAt,
      oauth_client_id: owner.clientId,
      refresh_hash: token.refreshHash,
      refresh_expires_at: token.refreshExpiresAt,
      family_id: owner.familyId,
    })
    .execute();
}

/** Revokes the live tokens a client holds for an account: one token per client and account. */
async function revokeClientTokens(trx: Transaction<Database>, accountId: string, clientId: string, now: number) {
  await trx
    .updateTable('tokens')
    .set({ revoked_at: now })
    .where('account_id', '=', accountId)
    .where('oauth_client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes every live token of a grant (`family`), or the one token of that id from before grants existed. */
async function revokeGrant(trx: Transaction<Database>, family: string, now: number) {
  await trx
    .updateTable('tokens')
    .set({ revoked_at: now })
    .where((eb) => eb.or([eb('family_id', '=', family), eb('id', '=', family)]))
    .where('revoked_at', 'is', null)
    .execute();
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
        await revokeClientTokens(trx, won.account_id, clientId, now);
        const owner = { accountId: won.account_id, clientId, label: token.label, familyId: token.id, now };
        await insertOAuthToken(trx, token, owner);
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
      if (used.token_id !== null) await revokeGrant(trx, used.token_id, now);
      return { kind: 'replayed' };
    });
}

/**
 * Whether a refresh token spent at `spentAt` is being presented again by a parallel renewal (decision 0045): less
 * than `graceMs` after it was spent, while its grant still holds a live token issued by that renewal or after it (a
 * grant revoked since, by its human, RFC 7009, a new sign-in or a reuse, holds none, and stays ended).
 */
async function parallelRenewal(
  trx: Transaction<Database>,
  family: string,
  spentAt: number | null,
  now: number,
  graceMs: number,
): Promise<boolean> {
  if (spentAt === null || now - spentAt >= graceMs) return false;
  const live = await trx
    .selectFrom('tokens')
    .select('id')
    .where('family_id', '=', family)
    .where('revoked_at', 'is', null)
    .where('created_at', '>=', spentAt)
    .executeTakeFirst();
  return live !== undefined;
}

function refreshOAuthToken(db: Kysely<Database>): Store['refreshOAuthToken'] {
  return (refreshHash, clientId, token, now, graceMs) =>
    inTransaction<TokenRefresh, never>(db, async (trx) => {
      const find = () =>
        trx
          .selectFrom('tokens')
          .select(['id', 'account_id', 'label', 'revoked_at', 'refresh_expires_at', 'family_id'])
          .where('refresh_hash', '=', refreshHash)
          .where('oauth_client_id', '=', clientId)
          .executeTakeFirst();
      const row = await find();
      if (row === undefined) return { kind: 'invalid' };
      const family = row.family_id ?? row.id;
      const owner = { accountId: row.account_id, clientId, label: row.label, familyId: family, now };
      /** A second use: a parallel renewal gets its own pair in the grant, revoking nothing; any other ends it. */
      const spentAlready = async (spentAt: number | null): Promise<TokenRefresh> => {
        if (await parallelRenewal(trx, family, spentAt, now, graceMs)) {
          await insertOAuthToken(trx, token, owner);
          return { kind: 'issued', accountId: row.account_id };
        }
        await revokeGrant(trx, family, now);
        return { kind: 'reused' };
      };
      if (row.refresh_expires_at === null || Number(row.refresh_expires_at) <= now) {
        return row.revoked_at === null ? { kind: 'expired' } : spentAlready(null);
      }
      if (row.revoked_at !== null) return spentAlready(Number(row.revoked_at));
      const spent = await trx
        .updateTable('tokens')
        .set({ revoked_at: now })
        .where('id', '=', row.id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (spent.numUpdatedRows === 0n) {
        // A concurrent exchange spent it first: a second use of one refresh token, as above.
        const again = await find();
        return spentAlready(again?.revoked_at == null ? null : Number(again.revoked_at));
      }
      await revokeClientTokens(trx, row.account_id, clientId, now);
      await insertOAuthToken(trx, token, owner);
      return { kind: 'issued', accountId: row.account_id };
    });
}

function revokeOAuthToken(db: Kysely<Database>): Store['revokeOAuthToken'] {
  return (hash, clientId, now) =>
    inTransaction(db, async (trx) => {
      const row = await trx
        .selectFrom('tokens')
        .select(['id', 'oauth_client_id', 'family_id'])
        .where((eb) => eb.or([eb('hash', '=', hash), eb('refresh_hash', '=', hash)]))
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (row === undefined) return 'unknown';
      if (row.oauth_client_id !== clientId) return 'foreign';
      await revokeGrant(trx, row.family_id ?? row.id, now);
      return 'revoked';
    });
}
