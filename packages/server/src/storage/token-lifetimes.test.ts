/**
 * Migration 0012 (docs/decisions/0030-expiring-oauth-tokens-with-rotating-refresh.md) on every dialect: tokens issued
 * before it keep working and do not expire; an OAuth token whose code is still kept learns its client; every token
 * can then be listed with its lifetime. On SQLite, also when a previous run stopped half way.
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, openAtMigration, type TestDatabase } from '../../test/databases.js';

type Loose = Kysely<Record<string, Record<string, unknown>>>;

/** An account with a device-flow token and an OAuth token (with its client and used code), as 0011 stored them. */
async function seedBefore(db: Loose): Promise<void> {
  await db
    .insertInto('accounts')
    .values({ id: 'u_old', provider: 'local', subject: 'old', login: 'old', created_at: 1, drop_count: 0 })
    .execute();
  const token = (id: string, label: string) => ({
    id,
    hash: `hash-${id}`,
    account_id: 'u_old',
    label,
    created_at: 1,
    last_used_at: null,
    revoked_at: null,
  });
  await db
    .insertInto('tokens')
    .values([token('device000000', 'laptop'), token('oauth0000000', 'Agent')])
    .execute();
  await db
    .insertInto('oauth_clients')
    .values({ id: 'hdc_old', name: 'Agent', redirect_uris: '[]', metadata: '{}', created_at: 1, last_used_at: 1 })
    .execute();
  await db
    .insertInto('oauth_codes')
    .values({
      hash: 'code-hash',
      client_id: 'hdc_old',
      account_id: 'u_old',
      code_challenge: 'c',
      redirect_uri: 'http://127.0.0.1/cb',
      resource: null,
      created_at: 1,
      expires_at: 2,
      used_at: 1,
      token_id: 'oauth0000000',
    })
    .execute();
}

async function expectMigrated(database: TestDatabase): Promise<void> {
  const store = database.open();
  await store.migrate();
  try {
    const device = await store.findActiveToken('hash-device000000');
    expect(device?.token).toMatchObject({ expiresAt: null, oauthClient: null, renewableUntil: null });
    const oauth = await store.findActiveToken('hash-oauth0000000');
    expect(oauth?.token).toMatchObject({
      expiresAt: null,
      oauthClient: { id: 'hdc_old', name: 'Agent' },
      renewableUntil: null,
    });
    expect((await store.listActiveTokens('u_old')).map((t) => t.id)).toEqual(['device000000', 'oauth0000000']);
    // Revoking it as a grant works on a token from before grants existed.
    expect(await store.revokeOAuthToken('hash-oauth0000000', 'hdc_old', 5)).toBe('revoked');
    expect(await store.findActiveToken('hash-oauth0000000')).toBeUndefined();
  } finally {
    await store.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`migration 0012 on ${dialect}`, () => {
    it('keeps every token working and not expiring, and names the client of an OAuth token', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const db = (await openAtMigration(database, '0011-comment-clock')) as unknown as Loose;
        await seedBefore(db);
        await db.destroy();
        await expectMigrated(database);
      } finally {
        await database.drop();
      }
    });
  });
}

describe('migration 0012 on sqlite, cut short', () => {
  it('completes when a crash left some of its columns added', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const db = (await openAtMigration(database, '0011-comment-clock')) as unknown as Loose;
      await seedBefore(db);
      await db.schema.alterTable('tokens').addColumn('expires_at', 'bigint').execute();
      await db.schema.alterTable('tokens').addColumn('oauth_client_id', 'text').execute();
      await db.destroy();
      await expectMigrated(database);
    } finally {
      await database.drop();
    }
  });
});
