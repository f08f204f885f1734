/** Accounts and API tokens over Kysely. Each method's atomicity is stated on it in domain/store.ts. */
import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { Identity } from '../../domain/types.js';
import type { AccountsTable, Database } from '../schema.js';
import { prepared, slot } from './prepared.js';
import { TOKEN_COLUMNS, type TokenRow, toAccount, toToken } from './shared.js';

export type AccountStore = Pick<
  Store,
  | 'ensureAccount'
  | 'findAccount'
  | 'findAccountsByLogin'
  | 'listAccounts'
  | 'createToken'
  | 'findActiveToken'
  | 'listActiveTokens'
  | 'revokeToken'
  | 'recordTokenUse'
>;

export function accountStore(db: Kysely<Database>): AccountStore {
  return {
    ensureAccount: ensureAccount(db),
    findAccount: findAccount(db),
    findAccountsByLogin: findAccountsByLogin(db),
    listAccounts: listAccounts(db),
    createToken: createToken(db),
    findActiveToken: findActiveToken(db),
    listActiveTokens: listActiveTokens(db),
    revokeToken: revokeToken(db),
    recordTokenUse: recordTokenUse(db),
  };
}

function ensureAccount(db: Kysely<Database>): Store['ensureAccount'] {
  return async (identity: Identity, newId: string, now: number) => {
    await db
      .insertInto('accounts')
      .values({
        id: newId,
        provider: identity.provider,
        subject: identity.subject,
        login: identity.login,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['provider', 'subject']).doUpdateSet({ login: identity.login }))
      .execute();
    const row = await db
      .selectFrom('accounts')
      .selectAll()
      .where('provider', '=', identity.provider)
      .where('subject', '=', identity.subject)
      .executeTakeFirstOrThrow();
    return toAccount(row);
  };
}

function findAccount(db: Kysely<Database>): Store['findAccount'] {
  return async (id) => {
    const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  };
}

function findAccountsByLogin(db: Kysely<Database>): Store['findAccountsByLogin'] {
  return async (login) => {
    const rows = await db.selectFrom('accounts').selectAll().where('login', '=', login).orderBy('created_at').execute();
    return rows.map(toAccount);
  };
}

function listAccounts(db: Kysely<Database>): Store['listAccounts'] {
  return async () => {
    const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').execute();
    return rows.map(toAccount);
  };
}

function createToken(db: Kysely<Database>): Store['createToken'] {
  return async (token) => {
    await db
      .insertInto('tokens')
      .values({
        id: token.id,
        hash: token.hash,
        account_id: token.accountId,
        label: token.label,
        created_at: token.now,
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    return {
      id: token.id,
      accountId: token.accountId,
      label: token.label,
      createdAt: token.now,
      lastUsedAt: null,
      expiresAt: null,
      oauthClient: null,
      renewableUntil: null,
    };
  };
}

/** The token lookup of every authenticated request, compiled once (kysely/prepared.ts). */
const selectActiveToken = prepared<{ hash: string }>((db) =>
  db
    .selectFrom('tokens')
    .innerJoin('accounts', 'accounts.id', 'tokens.account_id')
    .leftJoin('oauth_clients', 'oauth_clients.id', 'tokens.oauth_client_id')
    .select([
      'tokens.id as token_id',
      'tokens.label',
      'tokens.created_at as token_created_at',
      'tokens.last_used_at',
      'tokens.expires_at',
      'tokens.oauth_client_id',
      'tokens.refresh_expires_at',
      'oauth_clients.name as client_name',
      'accounts.id',
      'accounts.provider',
      'accounts.subject',
      'accounts.login',
      'accounts.created_at',
      'accounts.drop_count',
    ])
    .where('tokens.hash', '=', slot<string>('hash'))
    .where('tokens.revoked_at', 'is', null),
);

type ActiveTokenRow = Selectable<AccountsTable> &
  Omit<TokenRow, 'id' | 'account_id' | 'created_at' | 'revoked_at'> & {
    token_id: string;
    token_created_at: number;
  };

function findActiveToken(db: Kysely<Database>): Store['findActiveToken'] {
  return async (hash) => {
    const row = (await selectActiveToken<ActiveTokenRow>(db, { hash })).rows[0];
    if (row === undefined) return undefined;
    return {
      account: toAccount(row),
      token: toToken({
        ...row,
        id: row.token_id,
        account_id: row.id,
        created_at: row.token_created_at,
        revoked_at: null,
      }),
    };
  };
}

function listActiveTokens(db: Kysely<Database>): Store['listActiveTokens'] {
  return async (accountId) => {
    const rows = await db
      .selectFrom('tokens')
      .leftJoin('oauth_clients', 'oauth_clients.id', 'tokens.oauth_client_id')
      .select([...TOKEN_COLUMNS, 'oauth_clients.name as client_name'])
      .where('tokens.account_id', '=', accountId)
      .where('tokens.revoked_at', 'is', null)
      .orderBy('tokens.created_at')
      .orderBy('tokens.id')
      .execute();
    return rows.map(toToken);
  };
}

function revokeToken(db: Kysely<Database>): Store['revokeToken'] {
  return async (id, accountId, now) => {
    // The token, and every live token of its OAuth grant (an id a refresh has replaced still names the grant).
    let query = db
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('revoked_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('id', '=', id),
          eb('family_id', 'in', eb.selectFrom('tokens as named').select('named.family_id').where('named.id', '=', id)),
        ]),
      );
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  };
}

function recordTokenUse(db: Kysely<Database>): Store['recordTokenUse'] {
  return async (uses) => {
    if (uses.size === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const [id, at] of uses) {
        await trx
          .updateTable('tokens')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
          .execute();
      }
    });
  };
}
