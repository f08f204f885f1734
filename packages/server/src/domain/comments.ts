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
import { newCommentId, type RandomInt } from './ids.js';
import { hitWindow, type RateCounter } from './rate-counter.js';
import type { CommentStore, DropStore } from './store.js';
import { type CommentRecord, type DropRecord, isExpired } from './types.js';

export const MAX_COMMENT_CHARS = 4000;
export const MAX_QUOTE_CHARS = 1000;
export const MAX_GUEST_NAME_CHARS = 60;
/** Guests: comments per address per drop, per window. */
export const GUEST_COMMENTS_PER_WINDOW = 10;
export const GUEST_WINDOW_MS = 10 * 60_000;
/** Comments per drop, all versions together. */
export const MAX_COMMENTS_PER_DROP = 1000;
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
    MAX_COMMENTS_PER_DROP,
  );
  if (added === 'not_found') throw new ApiError('not_found', { message: `No drop with slug "${drop.slug}".` });
  if (added === 'version_not_found') {
    throw new ApiError('version_not_found', { details: { version: input.version } });
  }
  if (added === 'comment_limit') {
    throw new ApiError('comment_limit_reached', { details: { max_comments: MAX_COMMENTS_PER_DROP } });
  }
  await deps.signal.announce(drop.accountId);
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

/** The comments of one version, oldest first, for the viewer's panel (anyone who may view the version). */
export async function commentsOfVersion(deps: CommentDeps, slug: string, version: number): Promise<CommentRecord[]> {
  return deps.store.listComments({ slug, version }, 0, MAX_COMMENTS_PER_DROP);
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
  await deps.store.resolveComments(slug, ids, version, deps.clock.now());
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
  return changed ?? existing;
}

/** The owner deletes any comment of their drop. */
export async function deleteComment(deps: CommentDeps, accountId: string, slug: string, id: string): Promise<void> {
  await getOwnedDrop(deps, accountId, slug);
  if (!(await deps.store.deleteComment(slug, id))) {
    throw new ApiError('not_found', { message: `No comment "${id}" on this drop.` });
  }
}
