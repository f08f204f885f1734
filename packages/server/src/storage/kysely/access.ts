/**
 * A drop's recipient links and its access log (migration 0015; docs/api.md, "Who can see a drop"). Both go with their
 * drop (foreign keys that cascade). A link's secret reaches this module only as its SHA-256.
 */
import type { Kysely, Selectable } from 'kysely';
import type { AccessEntry, AccessStore, RecipientLink, RefusalReason } from '../../domain/store.js';
import type { AccessLogTable, Database, RecipientLinksTable } from '../schema.js';

const millisOrNull = (value: number | null) => (value === null ? null : Number(value));

const LINK_COLUMNS = [
  'id',
  'slug',
  'label',
  'created_at',
  'expires_at',
  'revoked_at',
  'views',
  'last_viewed_at',
] as const;

function toLink(row: Pick<Selectable<RecipientLinksTable>, (typeof LINK_COLUMNS)[number]>): RecipientLink {
  return {
    id: row.id,
    slug: row.slug,
    label: row.label,
    createdAt: Number(row.created_at),
    expiresAt: millisOrNull(row.expires_at),
    revokedAt: millisOrNull(row.revoked_at),
    views: Number(row.views),
    lastViewedAt: millisOrNull(row.last_viewed_at),
  };
}

function toEntry(row: Selectable<AccessLogTable>): AccessEntry {
  return {
    id: row.id,
    slug: row.slug,
    at: Number(row.at),
    outcome: row.outcome as AccessEntry['outcome'],
    reason: row.reason as RefusalReason | null,
    who: { kind: row.who_kind as AccessEntry['who']['kind'], name: row.who_name },
    version: row.version === null ? null : Number(row.version),
  };
}

export function accessStore(db: Kysely<Database>): AccessStore {
  return {
    async createLink(link) {
      await db
        .insertInto('recipient_links')
        .values({
          id: link.id,
          slug: link.slug,
          label: link.label,
          secret_hash: link.secretHash,
          created_at: link.createdAt,
          expires_at: link.expiresAt,
          revoked_at: null,
          last_viewed_at: null,
        })
        .execute();
    },
    async listLinks(slug) {
      const rows = await db
        .selectFrom('recipient_links')
        .select(LINK_COLUMNS)
        .where('slug', '=', slug)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(toLink);
    },
    async findLinkBySecretHash(slug, secretHash) {
      const row = await db
        .selectFrom('recipient_links')
        .select(LINK_COLUMNS)
        .where('secret_hash', '=', secretHash)
        .where('slug', '=', slug)
        .executeTakeFirst();
      return row === undefined ? undefined : toLink(row);
    },
    async findLink(slug, id) {
      const row = await db
        .selectFrom('recipient_links')
        .select(LINK_COLUMNS)
        .where('id', '=', id)
        .where('slug', '=', slug)
        .executeTakeFirst();
      return row === undefined ? undefined : toLink(row);
    },
    async revokeLink(slug, id, now) {
      const found = await db
        .updateTable('recipient_links')
        .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
        .where('id', '=', id)
        .where('slug', '=', slug)
        .executeTakeFirst();
      return found.numUpdatedRows > 0n;
    },
    async countLinkView(id, now) {
      await db
        .updateTable('recipient_links')
        .set((eb) => ({ views: eb('views', '+', 1), last_viewed_at: now }))
        .where('id', '=', id)
        .execute();
    },
    async appendAccess(entries) {
      if (entries.length === 0) return;
      const slugs = [...new Set(entries.map((e) => e.slug))];
      // Only entries of drops that still exist: a drop deleted meanwhile takes its log with it.
      const alive = new Set(
        (await db.selectFrom('drops').select('slug').where('slug', 'in', slugs).execute()).map((r) => r.slug),
      );
      const rows = entries
        .filter((e) => alive.has(e.slug))
        .map((e) => ({
          id: e.id,
          slug: e.slug,
          at: e.at,
          outcome: e.outcome,
          reason: e.reason,
          who_kind: e.who.kind,
          who_name: e.who.name,
          version: e.version,
        }));
      if (rows.length === 0) return;
      try {
        await db.insertInto('access_log').values(rows).execute();
      } catch (error) {
        // A drop deleted between the check and the insert: its entries have nowhere to go.
        const stillAlive = await db.selectFrom('drops').select('slug').where('slug', 'in', slugs).execute();
        if (stillAlive.length === slugs.length) throw error;
      }
    },
    async listAccess(slug, since, limit) {
      const rows = await db
        .selectFrom('access_log')
        .selectAll()
        .where('slug', '=', slug)
        .where('at', '>=', since)
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toEntry);
    },
    async purgeAccess(before) {
      await db.deleteFrom('access_log').where('at', '<', before).execute();
    },
  };
}
