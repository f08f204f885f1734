/** The Store, written once over Kysely. Dialect-specific SQL comes from the Dialect. */
import { type Kysely, Migrator, type Selectable, type Transaction } from 'kysely';
import type {
  Account,
  DeviceRequest,
  DeviceRequestState,
  DropRecord,
  ListQuery,
  TokenInfo,
  VersionInfo,
} from '../domain/types.js';
import type { Dialect } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import type { AccountsTable, Database, DeviceRequestsTable, DropsTable, TokensTable } from './schema.js';
import type { DropChanges, Identity, NewDrop, NewVersion, RateWindow, Store } from './store.js';

const DROP_COLUMNS = [
  'slug',
  'account_id',
  'title',
  'description',
  'passcode_hash',
  'passcode_generation',
  'latest_version',
  'version_count',
  'view_count',
  'metadata',
  'created_at',
  'updated_at',
] as const;

type DropRow = Pick<Selectable<DropsTable>, (typeof DROP_COLUMNS)[number]>;

function toDrop(row: DropRow): DropRecord {
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
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toDeviceRequest(row: Selectable<DeviceRequestsTable>): DeviceRequest {
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

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    provider: row.provider,
    subject: row.subject,
    login: row.login,
    createdAt: Number(row.created_at),
    dropCount: Number(row.drop_count),
  };
}

function toToken(
  row: Pick<Selectable<TokensTable>, 'id' | 'account_id' | 'label' | 'created_at' | 'last_used_at'>,
): TokenInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    label: row.label,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

/** Column updates for DropChanges. */
function changeSet(changes: DropChanges): Partial<Pick<DropsTable, 'title' | 'description' | 'metadata'>> {
  return {
    ...(changes.title === undefined ? {} : { title: changes.title }),
    ...(changes.description === undefined ? {} : { description: changes.description }),
    ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
  };
}

/** Thrown inside a transaction to roll it back and hand a result to the caller. */
class Rollback<T> {
  constructor(readonly result: T) {}
}

async function inTransaction<T, R>(
  db: Kysely<Database>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T | R> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (error instanceof Rollback) return error.result as R;
    throw error;
  }
}

export function createKyselyStore(dialect: Dialect): Store {
  const { db } = dialect;

  const selectDrop = (executor: Kysely<Database>, slug: string) =>
    executor.selectFrom('drops').select(DROP_COLUMNS).where('slug', '=', slug).executeTakeFirst();

  return {
    async migrate() {
      const schema = await dialect.migrationSchema();
      const migrator = new Migrator({
        db,
        provider: migrationProvider,
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error !== undefined || failed !== undefined) {
        throw new Error(`migration ${failed?.migrationName ?? ''} failed`, { cause: error });
      }
    },

    close: () => db.destroy(),

    databaseTime: () => dialect.now(),

    async ensureAccount(identity: Identity, newId: string, now: number) {
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
    },

    async findAccount(id) {
      const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toAccount(row);
    },

    async findAccountsByLogin(login) {
      const rows = await db
        .selectFrom('accounts')
        .selectAll()
        .where('login', '=', login)
        .orderBy('created_at')
        .execute();
      return rows.map(toAccount);
    },

    async listAccounts() {
      const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').execute();
      return rows.map(toAccount);
    },

    async createToken(token) {
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
      return { id: token.id, accountId: token.accountId, label: token.label, createdAt: token.now, lastUsedAt: null };
    },

    async findActiveToken(hash) {
      const row = await db
        .selectFrom('tokens')
        .innerJoin('accounts', 'accounts.id', 'tokens.account_id')
        .select([
          'tokens.id as token_id',
          'tokens.label',
          'tokens.created_at as token_created_at',
          'tokens.last_used_at',
          'accounts.id',
          'accounts.provider',
          'accounts.subject',
          'accounts.login',
          'accounts.created_at',
          'accounts.drop_count',
        ])
        .where('tokens.hash', '=', hash)
        .where('tokens.revoked_at', 'is', null)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        account: toAccount(row),
        token: toToken({
          id: row.token_id,
          account_id: row.id,
          label: row.label,
          created_at: row.token_created_at,
          last_used_at: row.last_used_at,
        }),
      };
    },

    async listActiveTokens(accountId) {
      const rows = await db
        .selectFrom('tokens')
        .select(['id', 'account_id', 'label', 'created_at', 'last_used_at'])
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toToken);
    },

    async revokeToken(id, accountId, now) {
      let query = db
        .updateTable('tokens')
        .set({ revoked_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null);
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      const result = await query.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async recordTokenUse(uses) {
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
    },

    createDrop(drop: NewDrop, maxDrops: number) {
      return inTransaction<DropRecord, undefined>(db, async (trx) => {
        const counted = await trx
          .updateTable('accounts')
          .set((eb) => ({ drop_count: eb('drop_count', '+', 1) }))
          .where('id', '=', drop.accountId)
          .where('drop_count', '<', maxDrops)
          .executeTakeFirst();
        if (counted.numUpdatedRows === 0n) throw new Rollback(undefined);
        const row = {
          slug: drop.slug,
          account_id: drop.accountId,
          title: drop.title,
          description: drop.description,
          passcode_hash: drop.passcodeHash,
          passcode_generation: drop.passcodeHash === null ? 0 : 1,
          latest_version: 1,
          last_issued_version: 1,
          version_count: 1,
          view_count: 0,
          metadata: JSON.stringify(drop.metadata),
          created_at: drop.now,
          updated_at: drop.now,
        };
        await trx.insertInto('drops').values(row).execute();
        await trx
          .insertInto('versions')
          .values({
            slug: drop.slug,
            version: 1,
            html: drop.html,
            size_bytes: drop.sizeBytes,
            context: drop.context,
            created_at: drop.now,
          })
          .execute();
        return toDrop(row);
      });
    },

    async findDrop(slug) {
      const row = await selectDrop(db, slug);
      return row === undefined ? undefined : toDrop(row);
    },

    async listDrops(accountId, query: ListQuery) {
      let base = db.selectFrom('drops').where('account_id', '=', accountId);
      for (const [key, value] of Object.entries(query.metadata)) {
        base = base.where(dialect.jsonText('metadata', key), '=', value);
      }
      const counted = await base
        .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
        .executeTakeFirstOrThrow();
      const total = Number(counted.n);
      const rows = await base
        .select(DROP_COLUMNS)
        .orderBy(query.sortBy, query.sortOrder)
        .orderBy('slug', query.sortOrder)
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize)
        .execute();
      return { items: rows.map(toDrop), total };
    },

    appendVersion(slug: string, version: NewVersion, changes: DropChanges, maxVersions: number) {
      return inTransaction<DropRecord | 'not_found' | 'version_limit', never>(db, async (trx) => {
        const row = await trx
          .updateTable('drops')
          .set((eb) => ({
            ...changeSet(changes),
            last_issued_version: eb('last_issued_version', '+', 1),
            latest_version: eb('last_issued_version', '+', 1),
            version_count: eb('version_count', '+', 1),
            updated_at: version.now,
          }))
          .where('slug', '=', slug)
          .where('version_count', '<', maxVersions)
          .returning(DROP_COLUMNS)
          .executeTakeFirst();
        if (row === undefined) {
          return (await selectDrop(trx, slug)) === undefined ? 'not_found' : 'version_limit';
        }
        await trx
          .insertInto('versions')
          .values({
            slug,
            version: Number(row.latest_version),
            html: version.html,
            size_bytes: version.sizeBytes,
            context: version.context,
            created_at: version.now,
          })
          .execute();
        return toDrop(row);
      });
    },

    async updateDrop(slug, changes, now) {
      const row = await db
        .updateTable('drops')
        .set({ ...changeSet(changes), updated_at: now })
        .where('slug', '=', slug)
        .returning(DROP_COLUMNS)
        .executeTakeFirst();
      return row === undefined ? undefined : toDrop(row);
    },

    async setPasscode(slug, passcodeHash, now) {
      const row = await db
        .updateTable('drops')
        .set((eb) => ({
          passcode_hash: passcodeHash,
          passcode_generation: eb('passcode_generation', '+', 1),
          updated_at: now,
        }))
        .where('slug', '=', slug)
        .returning(DROP_COLUMNS)
        .executeTakeFirst();
      return row === undefined ? undefined : toDrop(row);
    },

    async findPasscode(slug) {
      const row = await db
        .selectFrom('drops')
        .select(['passcode_hash', 'passcode_generation'])
        .where('slug', '=', slug)
        .executeTakeFirst();
      return row === undefined ? undefined : { hash: row.passcode_hash, generation: Number(row.passcode_generation) };
    },

    deleteDrop(slug) {
      return inTransaction<boolean, never>(db, async (trx) => {
        const row = await trx.deleteFrom('drops').where('slug', '=', slug).returning('account_id').executeTakeFirst();
        if (row === undefined) return false;
        await trx.deleteFrom('versions').where('slug', '=', slug).execute();
        await trx
          .updateTable('accounts')
          .set((eb) => ({ drop_count: eb('drop_count', '-', 1) }))
          .where('id', '=', row.account_id)
          .execute();
        return true;
      });
    },

    async listVersions(slug) {
      const rows = await db
        .selectFrom('versions')
        .select(['slug', 'version', 'size_bytes', 'created_at'])
        .select((eb) => eb('context', 'is not', null).as('has_context'))
        .where('slug', '=', slug)
        .orderBy('version', 'desc')
        .execute();
      return rows.map(
        (row): VersionInfo => ({
          slug: row.slug,
          version: Number(row.version),
          sizeBytes: Number(row.size_bytes),
          hasContext: Boolean(row.has_context),
          createdAt: Number(row.created_at),
        }),
      );
    },

    async getVersion(slug, version) {
      const row = await db
        .selectFrom('versions')
        .select(['slug', 'version', 'size_bytes', 'context', 'created_at'])
        .where('slug', '=', slug)
        .where('version', '=', version)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        slug: row.slug,
        version: Number(row.version),
        sizeBytes: Number(row.size_bytes),
        hasContext: row.context !== null,
        context: row.context,
        createdAt: Number(row.created_at),
      };
    },

    async getVersionContent(slug, version) {
      let query = db.selectFrom('versions').select(['version', 'html', 'created_at']).where('slug', '=', slug);
      query =
        version === undefined
          ? query.where('version', '=', (eb) =>
              eb.selectFrom('drops').select('latest_version').where('drops.slug', '=', slug),
            )
          : query.where('version', '=', version);
      const row = await query.executeTakeFirst();
      if (row === undefined) return undefined;
      return { version: Number(row.version), html: row.html, createdAt: Number(row.created_at) };
    },

    deleteVersion(slug, version, now) {
      type Result = DropRecord | 'not_found' | 'version_not_found' | 'last_version';
      return inTransaction<Result, Result>(db, async (trx) => {
        // The conditional decrement takes the drop's row lock first, so concurrent deletes serialize on it.
        const kept = await trx
          .updateTable('drops')
          .set((eb) => ({ version_count: eb('version_count', '-', 1), updated_at: now }))
          .where('slug', '=', slug)
          .where('version_count', '>', 1)
          .executeTakeFirst();
        if (kept.numUpdatedRows === 0n) {
          if ((await selectDrop(trx, slug)) === undefined) return 'not_found';
          const exists = await trx
            .selectFrom('versions')
            .select('version')
            .where('slug', '=', slug)
            .where('version', '=', version)
            .executeTakeFirst();
          return exists === undefined ? 'version_not_found' : 'last_version';
        }
        const removed = await trx
          .deleteFrom('versions')
          .where('slug', '=', slug)
          .where('version', '=', version)
          .executeTakeFirst();
        if (removed.numDeletedRows === 0n) throw new Rollback<Result>('version_not_found');
        const row = await trx
          .updateTable('drops')
          .set((eb) => ({
            latest_version: eb
              .selectFrom('versions')
              .select((v) => v.fn.max('version').as('m'))
              .where('versions.slug', '=', slug),
          }))
          .where('slug', '=', slug)
          .returning(DROP_COLUMNS)
          .executeTakeFirstOrThrow();
        return toDrop(row);
      });
    },

    hitRateWindows(windows: readonly RateWindow[]) {
      return inTransaction<{ exceeded: number | undefined }, { exceeded: number | undefined }>(db, async (trx) => {
        for (const [index, window] of windows.entries()) {
          const row = await trx
            .insertInto('rate_windows')
            .values({ key: window.key, count: 1, ends_at: window.endsAt })
            .onConflict((oc) =>
              oc
                .column('key')
                .doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) }))
                .where('rate_windows.count', '<', window.limit),
            )
            .returning('count')
            .executeTakeFirst();
          if (row === undefined) throw new Rollback({ exceeded: index });
        }
        return { exceeded: undefined };
      });
    },

    async releaseRateWindow(key) {
      await db
        .updateTable('rate_windows')
        .set((eb) => ({ count: eb('count', '-', 1) }))
        .where('key', '=', key)
        .where('count', '>', 0)
        .execute();
    },

    async ensureSetting(key, proposed) {
      await db
        .insertInto('settings')
        .values({ key, value: proposed })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
      return row.value;
    },

    async addViews(counts) {
      if (counts.size === 0) return;
      await db.transaction().execute(async (trx) => {
        for (const [slug, n] of counts) {
          await trx
            .updateTable('drops')
            .set((eb) => ({ view_count: eb('view_count', '+', n) }))
            .where('slug', '=', slug)
            .execute();
        }
      });
    },

    async purgeExpired(now, deviceRetentionMs) {
      await db.deleteFrom('rate_windows').where('ends_at', '<=', now).execute();
      await db
        .deleteFrom('device_requests')
        .where('expires_at', '<', now - deviceRetentionMs)
        .execute();
    },

    async createDeviceRequest(request) {
      const result = await db
        .insertInto('device_requests')
        .values({
          id: request.id,
          poll_hash: request.pollHash,
          user_code: request.userCode,
          label: request.label,
          status: 'pending',
          account_id: null,
          created_at: request.now,
          expires_at: request.expiresAt,
          decided_at: null,
        })
        .onConflict((oc) => oc.column('user_code').doNothing())
        .returning('id')
        .executeTakeFirst();
      return result !== undefined;
    },

    async findDeviceRequestByCode(userCode) {
      const row = await db
        .selectFrom('device_requests')
        .selectAll()
        .where('user_code', '=', userCode)
        .executeTakeFirst();
      return row === undefined ? undefined : toDeviceRequest(row);
    },

    async findDeviceRequestByPollHash(pollHash) {
      const row = await db
        .selectFrom('device_requests')
        .selectAll()
        .where('poll_hash', '=', pollHash)
        .executeTakeFirst();
      return row === undefined ? undefined : toDeviceRequest(row);
    },

    async decideDeviceRequest(userCode, decision, now) {
      const result = await db
        .updateTable('device_requests')
        .set(
          decision === 'deny'
            ? { status: 'denied', decided_at: now }
            : { status: 'approved', account_id: decision.approve, decided_at: now },
        )
        .where('user_code', '=', userCode)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    claimDeviceRequest(pollHash, token, now) {
      return inTransaction<{ accountId: string; label: string | null } | undefined, never>(db, async (trx) => {
        const row = await trx
          .updateTable('device_requests')
          .set({ status: 'claimed' })
          .where('poll_hash', '=', pollHash)
          .where('status', '=', 'approved')
          .returning(['account_id', 'label'])
          .executeTakeFirst();
        if (row === undefined || row.account_id === null) return undefined;
        await trx
          .insertInto('tokens')
          .values({
            id: token.id,
            hash: token.hash,
            account_id: row.account_id,
            label: row.label,
            created_at: now,
            last_used_at: null,
            revoked_at: null,
          })
          .execute();
        return { accountId: row.account_id, label: row.label };
      });
    },
  };
}
