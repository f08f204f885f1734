/** Service-wide settings over Kysely. The atomicity of ensureSetting is stated on it in domain/store.ts. */
import type { Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { Database } from '../schema.js';

export type SettingStore = Pick<Store, 'ensureSetting'>;

export function settingStore(db: Kysely<Database>): SettingStore {
  return {
    async ensureSetting(key, proposed) {
      await db
        .insertInto('settings')
        .values({ key, value: proposed })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
      return row.value;
    },
  };
}
