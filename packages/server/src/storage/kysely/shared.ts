/**
 * What the per-aggregate parts of the Kysely store share: the drop column list, the row -> domain mappers (rows
 * never leave storage/), the column updates for DropChanges, and the transaction helper.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { NetworkPolicy } from '../../domain/network.js';
import type { DropChanges } from '../../domain/store.js';
import type {
  Account,
  CommentSetting,
  DeviceRequest,
  DeviceRequestState,
  DropRecord,
  TokenInfo,
  Visibility,
} from '../../domain/types.js';
import type { AccountsTable, Database, DeviceRequestsTable, DropsTable, TokensTable } from '../schema.js';

export const DROP_COLUMNS = [
  'slug',
  'account_id',
  'title',
  'description',
  'passcode_hash',
  'passcode_generation',
  'latest_version',
  'version_count',
  'view_count',
  'comments',
  'metadata',
  'created_at',
  'updated_at',
  'expires_at',
  'content_label',
  'network',
  'visibility',
  'allow',
] as const;

export type DropRow = Pick<Selectable<DropsTable>, (typeof DROP_COLUMNS)[number]>;

export function toDrop(row: DropRow): DropRecord {
  return {
    slug: row.slug,
    accountId: row.account_id,
    title: row.title,
    description: row.description,
    locked: row.passcode_hash !== null,
    passcodeGeneration: Number(row.passcode_generation),
    latestVersion: Number(row.latest_version),
    versionCount: Number(row.version_count),
    viewCount: Number(row.view_count),
    comments: row.comments as CommentSetting,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    // Set on every insert; migration 0008 labelled the drops made before it.
    contentLabel: row.content_label,
    network: decodeNetwork(row.network),
    visibility: row.visibility as Visibility,
    allow: Object.freeze(JSON.parse(row.allow) as string[]),
  };
}

/** `open` and `none` as they are; an allow-list as a JSON array (domain/network.ts). */
export const encodeNetwork = (policy: NetworkPolicy): string =>
  typeof policy === 'string' ? policy : JSON.stringify(policy);

function decodeNetwork(stored: string): NetworkPolicy {
  if (stored === 'open' || stored === 'none') return stored;
  return Object.freeze(JSON.parse(stored) as string[]);
}

export function toDeviceRequest(row: Selectable<DeviceRequestsTable>): DeviceRequest {
  return {
    id: row.id,
    userCode: row.user_code,
    label: row.label,
    state: row.status as DeviceRequestState,
    accountId: row.account_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

export function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    provider: row.provider,
    subject: row.subject,
    login: row.login,
    createdAt: Number(row.created_at),
    dropCount: Number(row.drop_count),
  };
}

/** The columns of a token row that `toToken` reads, and the name of its OAuth client (a left join). */
export type TokenRow = Pick<
  Selectable<TokensTable>,
  | 'id'
  | 'account_id'
  | 'label'
  | 'created_at'
  | 'last_used_at'
  | 'expires_at'
  | 'oauth_client_id'
  | 'refresh_expires_at'
  | 'revoked_at'
> & { readonly client_name: string | null };

/** The token columns a `TokenRow` comes from (the client's name is `oauth_clients.name as client_name`). */
export const TOKEN_COLUMNS = [
  'tokens.id',
  'tokens.account_id',
  'tokens.label',
  'tokens.created_at',
  'tokens.last_used_at',
  'tokens.expires_at',
  'tokens.oauth_client_id',
  'tokens.refresh_expires_at',
  'tokens.revoked_at',
] as const;

const millisOrNull = (value: number | null) => (value === null ? null : Number(value));

export function toToken(row: TokenRow): TokenInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    label: row.label,
    createdAt: Number(row.created_at),
    lastUsedAt: millisOrNull(row.last_used_at),
    expiresAt: millisOrNull(row.expires_at),
    oauthClient: row.oauth_client_id === null ? null : { id: row.oauth_client_id, name: row.client_name },
    // A revoked row's refresh token is spent: nothing renews it.
    renewableUntil: row.revoked_at === null ? millisOrNull(row.refresh_expires_at) : null,
  };
}

/** Column updates for DropChanges. */
export function changeSet(changes: DropChanges): Partial<
  Pick<DropsTable, 'title' | 'description' | 'metadata' | 'expires_at'> & {
    comments: string;
    network: string;
    visibility: string;
    allow: string;
  }
> {
  return {
    ...(changes.visibility === undefined ? {} : { visibility: changes.visibility }),
    ...(changes.allow === undefined ? {} : { allow: JSON.stringify(changes.allow) }),
    ...(changes.network === undefined ? {} : { network: encodeNetwork(changes.network) }),
    ...(changes.expiresAt === undefined ? {} : { expires_at: changes.expiresAt }),
    ...(changes.comments === undefined ? {} : { comments: changes.comments }),
    ...(changes.title === undefined ? {} : { title: changes.title }),
    ...(changes.description === undefined ? {} : { description: changes.description }),
    ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
  };
}

/** Thrown inside a transaction to roll it back and hand a result to the caller. */
export class Rollback<T> {
  constructor(readonly result: T) {}
}

/** Runs `work` in a transaction (of `db`, or begun by the given function); a Rollback thrown in it is the result. */
export async function inTransaction<T, R>(
  db: Kysely<Database> | ((work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>),
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T | R> {
  try {
    return await (typeof db === 'function' ? db(work) : db.transaction().execute(work));
  } catch (error) {
    if (error instanceof Rollback) return error.result as R;
    throw error;
  }
}
