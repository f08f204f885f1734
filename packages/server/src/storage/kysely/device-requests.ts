/**
 * Device requests (the device authorization flow's pending, decided and claimed requests) over Kysely. Each
 * method's atomicity is stated on it in domain/store.ts.
 */
import type { Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { Database } from '../schema.js';
import { inTransaction, toDeviceRequest } from './shared.js';

export type DeviceRequestStore = Pick<
  Store,
  | 'createDeviceRequest'
  | 'findDeviceRequestByCode'
  | 'findDeviceRequestByPollHash'
  | 'decideDeviceRequest'
  | 'claimDeviceRequest'
>;

export function deviceRequestStore(db: Kysely<Database>): DeviceRequestStore {
  return {
    createDeviceRequest: createDeviceRequest(db),
    findDeviceRequestByCode: findDeviceRequestByCode(db),
    findDeviceRequestByPollHash: findDeviceRequestByPollHash(db),
    decideDeviceRequest: decideDeviceRequest(db),
    claimDeviceRequest: claimDeviceRequest(db),
  };
}

function createDeviceRequest(db: Kysely<Database>): Store['createDeviceRequest'] {
  return async (request) => {
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
  };
}

function findDeviceRequestByCode(db: Kysely<Database>): Store['findDeviceRequestByCode'] {
  return async (userCode) => {
    const row = await db.selectFrom('device_requests').selectAll().where('user_code', '=', userCode).executeTakeFirst();
    return row === undefined ? undefined : toDeviceRequest(row);
  };
}

function findDeviceRequestByPollHash(db: Kysely<Database>): Store['findDeviceRequestByPollHash'] {
  return async (pollHash) => {
    const row = await db.selectFrom('device_requests').selectAll().where('poll_hash', '=', pollHash).executeTakeFirst();
    return row === undefined ? undefined : toDeviceRequest(row);
  };
}

function decideDeviceRequest(db: Kysely<Database>): Store['decideDeviceRequest'] {
  return async (userCode, decision, now) => {
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
  };
}

function claimDeviceRequest(db: Kysely<Database>): Store['claimDeviceRequest'] {
  return (pollHash, token, now) =>
    inTransaction<{ accountId: string; label: string | null } | undefined, never>(db, async (trx) => {
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
}
