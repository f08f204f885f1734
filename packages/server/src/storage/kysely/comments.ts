/**
 * Comments on drop versions over Kysely (docs/api.md, "Comments"): adding one atomically with the per-drop cap and
 * with strictly increasing times per drop owner (the owner's comment clock), listing after a time, pages newest
 * first, resolving and deleting (one or many).
 */
import type { Kysely, Selectable, SelectQueryBuilder, Transaction } from 'kysely';
import type { CommentPageQuery, Store } from '../../domain/store.js';
import type { CommentAuthorKind, CommentRecord } from '../../domain/types.js';
import type { CommentsTable, Database } from '../schema.js';
import { inTransaction, Rollback } from './shared.js';

type CommentStore = Pick<
  Store,
  | 'addComment'
  | 'listComments'
  | 'findComment'
  | 'resolveComments'
  | 'deleteComment'
  | 'pageComments'
  | 'deleteComments'
>;

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

/**
 * The owner's next comment time: one above the account's comment clock, or `now` when later (migration 0011). The
 * update locks the account row until the transaction ends, so two comments of one owner, on any of their drops,
 * take their times one after the other and commit in that order: a reader that has seen a time has seen every
 * comment before it (docs/architecture.md, "Comments and waiting for them"). Taken after the drop row, the order a
 * drop's delete takes them in.
 */
async function tickCommentClock(trx: Transaction<Database>, accountId: string, now: number): Promise<number> {
  const row = await trx
    .updateTable('accounts')
    .set((eb) => ({
      comment_clock: eb
        .case()
        .when('comment_clock', '>=', now)
        .then(eb('comment_clock', '+', 1))
        .else(now)
        .end(),
    }))
    .where('id', '=', accountId)
    .returning('comment_clock')
    .executeTakeFirstOrThrow();
  return Number(row.comment_clock);
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
      if (comment.authorKind !== 'owner') {
        // The cap counts and refuses others' comments only: the owner can always comment (docs/api.md, "Comments").
        const { count } = await trx
          .selectFrom('comments')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('slug', '=', comment.slug)
          .where('author_kind', '<>', 'owner')
          .executeTakeFirstOrThrow();
        if (Number(count) >= maxComments) throw new Rollback('comment_limit');
      }
      const createdAt = await tickCommentClock(trx, drop.account_id, comment.now);
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
        created_at: createdAt,
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

/** The filters of a page query (all but `before`), on a query over the comments table. */
function filtered<Q extends SelectQueryBuilder<Database, 'comments', object>>(query: Q, q: CommentPageQuery): Q {
  let out = query.where('slug', '=', q.slug) as Q;
  if (q.version !== undefined) out = out.where('version', '=', q.version) as Q;
  if (q.resolvedIn !== undefined) {
    out = out.where('resolved_in_version', '=', q.resolvedIn).where('version', '<>', q.resolvedIn) as Q;
  }
  if (q.authorKind !== undefined) out = out.where('author_kind', '=', q.authorKind) as Q;
  if (q.open === true) out = out.where('resolved_at', 'is', null) as Q;
  return out;
}

function pageComments(db: Kysely<Database>): Store['pageComments'] {
  return async (q, limit) => {
    let rows: Selectable<CommentsTable>[] = [];
    if (limit > 0) {
      let query = filtered(db.selectFrom('comments').selectAll(), q);
      if (q.before !== undefined) query = query.where('created_at', '<', q.before);
      rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    }
    const { count } = await filtered(
      db.selectFrom('comments').select((eb) => eb.fn.countAll<number>().as('count')),
      q,
    ).executeTakeFirstOrThrow();
    return { comments: rows.map(toComment), total: Number(count) };
  };
}

function deleteComments(db: Kysely<Database>): Store['deleteComments'] {
  return async (slug, selection) => {
    let query = db.deleteFrom('comments').where('slug', '=', slug);
    if ('ids' in selection) {
      if (selection.ids.length === 0) return 0;
      query = query.where('id', 'in', [...selection.ids]);
    } else {
      query = query.where('author_kind', '=', selection.authorKind);
    }
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  };
}

export function commentStore(db: Kysely<Database>): CommentStore {
  return {
    addComment: addComment(db),
    listComments: listComments(db),
    findComment: findComment(db),
    resolveComments: resolveComments(db),
    deleteComment: deleteComment(db),
    pageComments: pageComments(db),
    deleteComments: deleteComments(db),
  };
}
