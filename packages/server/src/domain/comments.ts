/**
 * Comments on drop versions, and waiting for them (docs/api.md, "Comments"). Who may comment follows the drop's
 * `comments` setting: `off`, `signed_in` (anyone signed in through the identity provider), `open` (anyone who can
 * view the drop, with a typed name, limited per address); the owner always. Each new comment is announced to every
 * instance over the bus, so a request waiting for comments on any instance answers within moments of it.
 */

import type { Limits } from '../config.js';
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import type { EventSink } from './events.js';
import { newCommentId, type RandomInt } from './ids.js';
import { hitWindow, type RateCounter } from './rate-counter.js';
import type { CommentPage, CommentSelection, CommentStore, DropStore } from './store.js';
import { type CommentRecord, type DropRecord, isExpired } from './types.js';

export const MAX_COMMENT_CHARS = 4000;
export const MAX_QUOTE_CHARS = 1000;
export const MAX_GUEST_NAME_CHARS = 60;
/** Guests: comments per address per drop, per window. */
export const GUEST_COMMENTS_PER_WINDOW = 10;
export const GUEST_WINDOW_MS = 10 * 60_000;
/** Most comments one bulk delete names by id (the console's page is smaller). */
export const MAX_COMMENTS_PER_BULK_DELETE = 200;
/** Most comments one listing returns; a client pages on with `since` = the last one's `created_at`. */
export const MAX_COMMENTS_PER_LISTING = 500;

/** Tells every instance that an owner's drops have a new comment (the bus), and wakes waiting listings. */
export interface CommentSignal {
  announce(accountId: string): Promise<void>;
  /**
   * Resolves when a comment for `accountId` is announced ('woken'), after `ms` ('timeout'), or when `signal` aborts
   * or the instance shuts down ('stop').
   */
  wait(accountId: string, ms: number, signal?: AbortSignal): Promise<'woken' | 'timeout' | 'stop'>;
}

export interface CommentDeps {
  readonly store: CommentStore & Pick<DropStore, 'findDrop'>;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly counter: RateCounter;
  readonly signal: CommentSignal;
  readonly random?: RandomInt;
  /** Where `comment.*` events go (domain/events.ts); none: nowhere. */
  readonly events?: EventSink;
}

export interface CommentInput {
  readonly body: string;
  readonly version?: number | undefined;
  readonly quote?: string | null | undefined;
}

/** Who comments: the owner or another signed-in account (with its login), or a guest with a typed name. */
export type Commenter =
  | { readonly kind: 'account'; readonly accountId: string; readonly login: string }
  | { readonly kind: 'guest'; readonly name: string; readonly address: string };

const chars = (text: string) => [...text].length;

function checkedInput(input: CommentInput): { body: string; quote: string | null } {
  const body = input.body.trim();
  if (body === '' || chars(body) > MAX_COMMENT_CHARS) {
    throw new ApiError('invalid_arg', {
      message: `body must be 1 to ${MAX_COMMENT_CHARS} characters.`,
      details: { field: 'body', max_chars: MAX_COMMENT_CHARS },
    });
  }
  const quote = input.quote?.trim() || null;
  if (quote !== null && chars(quote) > MAX_QUOTE_CHARS) {
    throw new ApiError('invalid_arg', {
      message: `quote must be at most ${MAX_QUOTE_CHARS} characters.`,
      details: { field: 'quote', max_chars: MAX_QUOTE_CHARS },
    });
  }
  return { body, quote };
}

async function store(
  deps: CommentDeps,
  drop: DropRecord,
  input: CommentInput,
  author: { name: string; kind: 'owner' | 'member' | 'guest'; accountId: string | null },
): Promise<CommentRecord> {
  const { body, quote } = checkedInput(input);
  const added = await deps.store.addComment(
    {
      id: newCommentId(deps.random),
      slug: drop.slug,
      version: input.version,
      body,
      quote,
      authorName: author.name,
      authorKind: author.kind,
      authorAccountId: author.accountId,
      now: deps.clock.now(),
    },
    deps.limits.maxCommentsPerDrop,
  );
  if (added === 'not_found') throw new ApiError('not_found', { message: `No drop with slug "${drop.slug}".` });
  if (added === 'version_not_found') {
    throw new ApiError('version_not_found', { details: { version: input.version } });
  }
  if (added === 'comment_limit') {
    throw new ApiError('comment_limit_reached', { details: { max_comments: deps.limits.maxCommentsPerDrop } });
  }
  await deps.signal.announce(drop.accountId);
  const data = { id: added.id, version: added.version };
  await deps.events?.emit({
    type: 'comment.created',
    accountId: drop.accountId,
    slug: drop.slug,
    data,
    at: added.createdAt,
  });
  return added;
}

/** The owner comments through the API (always allowed, whatever the setting). */
export async function addOwnerComment(
  deps: CommentDeps,
  owner: { accountId: string; login: string },
  slug: string,
  input: CommentInput,
): Promise<CommentRecord> {
  const drop = await getOwnedDrop(deps, owner.accountId, slug);
  return store(deps, drop, input, { name: owner.login, kind: 'owner', accountId: owner.accountId });
}

/**
 * A viewer comments from the viewer page. `drop` is the drop the visitor is allowed to see (the caller has checked
 * the passcode capability of a locked drop). The owner always may; others as the drop's setting says. A guest is
 * limited per address and drop; a signed-in member's comment counts toward their write limits (the caller's).
 */
export async function addViewerComment(
  deps: CommentDeps,
  drop: DropRecord,
  who: Commenter,
  input: CommentInput,
): Promise<CommentRecord> {
  if (who.kind === 'account' && who.accountId === drop.accountId) {
    return store(deps, drop, input, { name: who.login, kind: 'owner', accountId: who.accountId });
  }
  if (drop.comments === 'off') throw new ApiError('comments_closed');
  if (who.kind === 'account') {
    return store(deps, drop, input, { name: who.login, kind: 'member', accountId: who.accountId });
  }
  if (drop.comments !== 'open') throw new ApiError('sign_in_required');
  const name = who.name.trim();
  if (name === '' || chars(name) > MAX_GUEST_NAME_CHARS) {
    throw new ApiError('invalid_arg', {
      message: `name must be 1 to ${MAX_GUEST_NAME_CHARS} characters.`,
      details: { field: 'name', max_chars: MAX_GUEST_NAME_CHARS },
    });
  }
  const key = `comment:${drop.slug}:${who.address}`;
  const hit = await hitWindow(deps.counter, key, GUEST_COMMENTS_PER_WINDOW, GUEST_WINDOW_MS, deps.clock.now());
  const waitSeconds = hit.retryAfterSeconds;
  if (waitSeconds !== undefined) {
    throw new ApiError('rate_limited', {
      message: `Too many comments from this address on this drop; retry in ${waitSeconds} s.`,
      retryAfterSeconds: waitSeconds,
    });
  }
  return store(deps, drop, input, { name, kind: 'guest', accountId: null });
}

/** What the viewer's panel shows for one version: a page of its comments, and those it resolved. */
export interface VersionComments {
  /** Made on this version: the newest page before `before`, newest first; `total` counts every page. */
  readonly made: CommentPage;
  /** The `before` of the next older page, when there is one. */
  readonly olderBefore: number | undefined;
  /** Made on earlier versions and resolved in this one: the newest page, newest first; `total` counts them all. */
  readonly resolvedHere: CommentPage;
}

/**
 * The comments of one version for the viewer's panel (anyone who may view the version): at most
 * `limits.commentsPerPage` of each kind, so the page stays small whatever the count (docs/api.md, "Comments").
 */
export async function commentsOfVersion(
  deps: CommentDeps,
  slug: string,
  version: number,
  before?: number,
): Promise<VersionComments> {
  const perPage = deps.limits.commentsPerPage;
  // One more than a page tells whether an older page exists.
  const [made, resolvedHere] = await Promise.all([
    deps.store.pageComments({ slug, version, ...(before === undefined ? {} : { before }) }, perPage + 1),
    deps.store.pageComments({ slug, resolvedIn: version }, perPage),
  ]);
  const shown = made.comments.slice(0, perPage);
  const olderBefore = made.comments.length > perPage ? shown[shown.length - 1]?.createdAt : undefined;
  return { made: { comments: shown, total: made.total }, olderBefore, resolvedHere };
}

/** What the console shows of one drop's comments: a page of them, and the counts its moderation needs. */
export interface DropComments {
  /** Every version's, newest first, before `before`; `total` counts every page. */
  readonly page: CommentPage;
  /** The `before` of the next older page, when there is one. */
  readonly olderBefore: number | undefined;
  /** Not resolved yet, of all. */
  readonly open: number;
  /** By guests, of all: what "delete all guest comments" removes. */
  readonly guests: number;
}

/** A page of comments of an owned drop for the console (newest first), with its counts. */
export async function commentsOfDrop(
  deps: CommentDeps,
  accountId: string,
  slug: string,
  before?: number,
): Promise<DropComments> {
  await getOwnedDrop(deps, accountId, slug);
  const perPage = deps.limits.commentsPerPage;
  const [page, open, guests] = await Promise.all([
    deps.store.pageComments({ slug, ...(before === undefined ? {} : { before }) }, perPage + 1),
    deps.store.pageComments({ slug, open: true }, 0),
    deps.store.pageComments({ slug, authorKind: 'guest' }, 0),
  ]);
  const shown = page.comments.slice(0, perPage);
  const olderBefore = page.comments.length > perPage ? shown[shown.length - 1]?.createdAt : undefined;
  return { page: { comments: shown, total: page.total }, olderBefore, open: open.total, guests: guests.total };
}

/** The drop a viewer comments on, or undefined (also once it expired: docs/api.md, "Expiry"). */
export async function findCommentedDrop(deps: CommentDeps, slug: string): Promise<DropRecord | undefined> {
  const drop = await deps.store.findDrop(slug);
  return drop === undefined || isExpired(drop, deps.clock.now()) ? undefined : drop;
}

/** Comments of one owned drop, or of every drop of the owner, created after `since`; waits up to `waitMs` for one. */
export async function listComments(
  deps: CommentDeps,
  accountId: string,
  scope: { slug: string } | 'all',
  since: number,
  waitMs: number,
  abort?: AbortSignal,
): Promise<CommentRecord[]> {
  if (scope !== 'all') await getOwnedDrop(deps, accountId, scope.slug);
  const where = scope === 'all' ? { accountId } : scope;
  const deadline = deps.clock.now() + waitMs;
  let stopped = false;
  for (;;) {
    const found = await deps.store.listComments(where, since, MAX_COMMENTS_PER_LISTING);
    const left = deadline - deps.clock.now();
    if (found.length > 0 || left <= 0 || stopped) return found;
    stopped = (await deps.signal.wait(accountId, left, abort)) === 'stop';
  }
}

/** The owner's comments of a drop, each checked to exist, for a new version that resolves them. */
export async function checkResolvable(deps: CommentDeps, slug: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    if ((await deps.store.findComment(slug, id)) === undefined) {
      throw new ApiError('invalid_arg', {
        message: `resolves: no comment "${id}" on this drop.`,
        details: { field: 'resolves' },
      });
    }
  }
}

/** Marks the comments a new version addresses resolved in it (PUT with `resolves`). */
export async function resolveInVersion(
  deps: CommentDeps,
  slug: string,
  ids: readonly string[],
  version: number,
): Promise<void> {
  const changed = await deps.store.resolveComments(slug, ids, version, deps.clock.now());
  if (changed.length === 0 || deps.events === undefined) return;
  const drop = await deps.store.findDrop(slug);
  if (drop !== undefined) for (const comment of changed) await emitResolved(deps, drop, comment);
}

/** `comment.resolved` for a comment just resolved (domain/events.ts). */
function emitResolved(deps: CommentDeps, drop: DropRecord, comment: CommentRecord): Promise<void> | undefined {
  const data = { id: comment.id, version: comment.version, resolved_in_version: comment.resolvedInVersion };
  return deps.events?.emit({
    type: 'comment.resolved',
    accountId: drop.accountId,
    slug: drop.slug,
    data,
    at: deps.clock.now(),
  });
}

/** Marks a comment resolved in the drop's latest version (the resolve endpoint). */
export async function resolveComment(
  deps: CommentDeps,
  accountId: string,
  slug: string,
  id: string,
): Promise<CommentRecord> {
  const drop = await getOwnedDrop(deps, accountId, slug);
  const existing = await deps.store.findComment(slug, id);
  if (existing === undefined) throw new ApiError('not_found', { message: `No comment "${id}" on this drop.` });
  const [changed] = await deps.store.resolveComments(slug, [id], drop.latestVersion, deps.clock.now());
  if (changed !== undefined) await emitResolved(deps, drop, changed);
  return changed ?? existing;
}

/**
 * The owner deletes many comments of their drop at once: those named (at most MAX_COMMENTS_PER_BULK_DELETE; ids not
 * on the drop are skipped), or every guest's. Answers how many were deleted.
 */
export async function deleteComments(
  deps: CommentDeps,
  accountId: string,
  slug: string,
  selection: CommentSelection,
): Promise<number> {
  await getOwnedDrop(deps, accountId, slug);
  if ('ids' in selection && selection.ids.length > MAX_COMMENTS_PER_BULK_DELETE) {
    throw new ApiError('invalid_arg', {
      message: `Select at most ${MAX_COMMENTS_PER_BULK_DELETE} comments at once.`,
      details: { field: 'ids', max_items: MAX_COMMENTS_PER_BULK_DELETE },
    });
  }
  return deps.store.deleteComments(slug, selection);
}

/** The owner deletes any comment of their drop. */
export async function deleteComment(deps: CommentDeps, accountId: string, slug: string, id: string): Promise<void> {
  await getOwnedDrop(deps, accountId, slug);
  if (!(await deps.store.deleteComment(slug, id))) {
    throw new ApiError('not_found', { message: `No comment "${id}" on this drop.` });
  }
}
