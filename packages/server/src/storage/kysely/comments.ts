/**
 * Comments on drop versions over Kysely (docs/api.md, "Comments"): adding one atomically with the per-drop cap and
 * with strictly increasing times per drop owner, listing after a time, resolving and deleting.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { CommentAuthorKind, CommentRecord } from '../../domain/types.js';
import type { CommentsTable, Database } from '../schema.js';
import { inTransaction, Rollback } from './shared.js';

type CommentStore = Pick<Store, 'addComment' | 'listComments' | 'findComment' | 'resolveComments' | 'deleteComment'>;

function toComment(row: Selectable<CommentsTable>): CommentRecord {
  return {
    id: row.id,
    slug: row.slug,
    version: Number(row.version),
    body: row.body,
    quote: row.quote,
    author: { name: row.author_name, kind: row.author_kind as CommentAuthorKind },
    createdAt: Number(row.created_at),
    resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
    resolvedInVersion: row.resolved_in_version === null ? null : Number(row.resolved_in_version),
  };
}

function addComment(db: Kysely<Database>): Store['addComment'] {
  return (comment, maxComments) =>
    inTransaction<CommentRecord, 'not_found' | 'version_not_found' | 'comment_limit'>(db, async (trx) => {
      // Locks the drop row (PostgreSQL) so that concurrent comments on one drop count against the cap one by one.
      const drop = await trx
        .updateTable('drops')
        .set((eb) => ({ latest_version: eb.ref('latest_version') }))
        .where('slug', '=', comment.slug)
        .returning(['account_id', 'latest_version'])
        .executeTakeFirst();
      if (drop === undefined) throw new Rollback('not_found');
      const version = comment.version ?? Number(drop.latest_version);
      const exists = await trx
        .selectFrom('versions')
        .select('version')
        .where('slug', '=', comment.slug)
        .where('version', '=', version)
        .executeTakeFirst();
      if (exists === undefined) throw new Rollback('version_not_found');
      const { count } = await trx
        .selectFrom('comments')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('slug', '=', comment.slug)
        .executeTakeFirstOrThrow();
      if (Number(count) >= maxComments) throw new Rollback('comment_limit');
      const { newest } = await trx
        .selectFrom('comments')
        .select((eb) => eb.fn.max<number | null>('created_at').as('newest'))
        .where('account_id', '=', drop.account_id)
        .executeTakeFirstOrThrow();
      const row = {
        id: comment.id,
        slug: comment.slug,
        account_id: drop.account_id,
        version,
        body: comment.body,
        quote: comment.quote,
        author_name: comment.authorName,
        author_kind: comment.authorKind,
        author_account_id: comment.authorAccountId,
        created_at: Math.max(comment.now, newest === null ? 0 : Number(newest) + 1),
        resolved_at: null,
        resolved_in_version: null,
      };
      await trx.insertInto('comments').values(row).execute();
      return toComment(row);
    });
}

function listComments(db: Kysely<Database>): Store['listComments'] {
  return async (scope, since, limit) => {
    let query = db.selectFrom('comments').selectAll().where('created_at', '>', since);
    query = 'slug' in scope ? query.where('slug', '=', scope.slug) : query.where('account_id', '=', scope.accountId);
    if ('slug' in scope && scope.version !== undefined) query = query.where('version', '=', scope.version);
    const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
    return rows.map(toComment);
  };
}

function findComment(db: Kysely<Database>): Store['findComment'] {
  return async (slug, id) => {
    const row = await db
      .selectFrom('comments')
      .selectAll()
      .where('slug', '=', slug)
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : toComment(row);
  };
}

function resolveComments(db: Kysely<Database>): Store['resolveComments'] {
  return async (slug, ids, inVersion, now) => {
    if (ids.length === 0) return [];
    const rows = await db
      .updateTable('comments')
      .set({ resolved_at: now, resolved_in_version: inVersion })
      .where('slug', '=', slug)
      .where('id', 'in', [...ids])
      .where('resolved_at', 'is', null)
      .returningAll()
      .execute();
    return rows.map(toComment);
  };
}

function deleteComment(db: Kysely<Database>): Store['deleteComment'] {
  return async (slug, id) => {
    const result = await db.deleteFrom('comments').where('slug', '=', slug).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  };
}

export function commentStore(db: Kysely<Database>): CommentStore {
  return {
    addComment: addComment(db),
    listComments: listComments(db),
    findComment: findComment(db),
    resolveComments: resolveComments(db),
    deleteComment: deleteComment(db),
  };
}
