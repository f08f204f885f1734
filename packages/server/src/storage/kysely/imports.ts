/**
 * Drops brought in from an export over Kysely (docs/api.md, "Export and import"): the one transaction that creates a
 * drop with every version, file, context and comment and notes where it came from. Its atomicity is stated on the
 * port in domain/store.ts.
 */
import type { Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { DropRecord } from '../../domain/types.js';
import type { BodyEncoder } from '../body-encoder.js';
import type { Database } from '../schema.js';
import { type Engine, reindexFromStore } from './search.js';
import { DROP_COLUMNS, encodeNetwork, inTransaction, Rollback, toDrop } from './shared.js';
import { encodeFiles, insertVersion } from './versions.js';

export type ImportStore = Pick<Store, 'findImportedDrop' | 'importDrop'>;

/** Comment rows per insert statement: eleven parameters each, well under every database's limit. */
const COMMENT_ROWS_PER_INSERT = 100;

export function importStore(db: Kysely<Database>, bodies: BodyEncoder, engine: Engine): ImportStore {
  return {
    async findImportedDrop(accountId, source) {
      const row = await db
        .selectFrom('imported_drops')
        .select('slug')
        .where('account_id', '=', accountId)
        .where('source', '=', source)
        .executeTakeFirst();
      return row?.slug;
    },

    importDrop: (drop, maxDrops) =>
      inTransaction<DropRecord, 'quota' | 'already_imported'>(db, async (trx) => {
        const row = {
          slug: drop.slug,
          account_id: drop.accountId,
          title: drop.title,
          description: drop.description,
          passcode_hash: drop.passcodeHash,
          passcode_generation: drop.passcodeHash === null ? 0 : 1,
          latest_version: 0,
          last_issued_version: 0,
          version_count: 0,
          view_count: 0,
          comments: drop.comments,
          metadata: JSON.stringify(drop.metadata),
          created_at: drop.createdAt,
          updated_at: drop.updatedAt,
          expires_at: drop.expiresAt,
          content_label: drop.contentLabel,
          network: encodeNetwork(drop.network),
          visibility: drop.visibility,
          allow: JSON.stringify(drop.allow),
        };
        await trx.insertInto('drops').values(row).execute();
        // The source next (its foreign key names the row above): a second import of the same drop stops here,
        // whatever the quota. Then the quota, as createDrop counts it.
        const noted = await trx
          .insertInto('imported_drops')
          .values({ account_id: drop.accountId, source: drop.source, slug: drop.slug, created_at: drop.now })
          .onConflict((oc) => oc.columns(['account_id', 'source']).doNothing())
          .executeTakeFirst();
        if (noted.numInsertedOrUpdatedRows === 0n) throw new Rollback('already_imported');
        const counted = await trx
          .updateTable('accounts')
          .set((eb) => ({ drop_count: eb('drop_count', '+', 1) }))
          .where('id', '=', drop.accountId)
          .where('drop_count', '<', maxDrops)
          .executeTakeFirst();
        if (counted.numUpdatedRows === 0n) throw new Rollback('quota');
        let latest = 0;
        let count = 0;
        for await (const version of drop.versions()) {
          const [body, files] = await Promise.all([bodies.encode(version.html), encodeFiles(bodies, version.files)]);
          await insertVersion(trx, drop.slug, version.version, {
            sizeBytes: version.sizeBytes,
            context: version.context,
            now: version.createdAt,
            warnings: version.warnings,
            body,
            files,
          });
          latest = Math.max(latest, version.version);
          count++;
        }
        const updated = await trx
          .updateTable('drops')
          .set({ latest_version: latest, last_issued_version: latest, version_count: count })
          .where('slug', '=', drop.slug)
          .returning(DROP_COLUMNS)
          .executeTakeFirstOrThrow();
        const rows = drop.commentList.map((comment) => ({
          id: comment.id,
          slug: drop.slug,
          account_id: drop.accountId,
          version: comment.version,
          body: comment.body,
          quote: comment.quote,
          author_name: comment.authorName,
          author_kind: comment.authorKind,
          // The archive's other accounts are not this instance's: only the owner's own comments keep an author.
          author_account_id: comment.authorKind === 'owner' ? drop.accountId : null,
          created_at: comment.createdAt,
          resolved_at: comment.resolvedAt,
          resolved_in_version: comment.resolvedInVersion,
        }));
        for (let at = 0; at < rows.length; at += COMMENT_ROWS_PER_INSERT) {
          await trx
            .insertInto('comments')
            .values(rows.slice(at, at + COMMENT_ROWS_PER_INSERT))
            .execute();
        }
        const newest = drop.commentList.reduce((max, comment) => Math.max(max, comment.createdAt), 0);
        if (newest > 0) {
          // The owner's next comment is later than every imported one (kysely/comments.ts, the comment clock).
          await trx
            .updateTable('accounts')
            .set({ comment_clock: newest })
            .where('id', '=', drop.accountId)
            .where('comment_clock', '<', newest)
            .execute();
        }
        // Found by a search at once, as a created drop is (docs/api.md, "Search"): in the same transaction.
        await reindexFromStore(trx, engine, drop.slug);
        return toDrop(updated);
      }),
  };
}
