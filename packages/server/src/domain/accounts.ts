/** Accounts and API tokens: issuing, authenticating, coalesced last-use tracking, revocation. */
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { isWellFormedToken, newApiToken, newUserId, type RandomInt, sha256Hex, tokenIdFromHash } from './ids.js';
import type { AccountStore } from './store.js';
import type { Account, Identity, TokenInfo } from './types.js';

export const MAX_TOKEN_LABEL_CHARS = 64;

/** What the account functions need: the store, the clock and the pending token uses. */
export interface AccountDeps {
  readonly store: AccountStore;
  readonly clock: Clock;
  readonly tokenUses: TokenUseRecorder;
}

/** The account bound to a provider identity, created on first sign-in (spec 2.5: one account per identity). */
export function ensureAccount(
  deps: Pick<AccountDeps, 'store' | 'clock'>,
  identity: Identity,
  random?: RandomInt,
): Promise<Account> {
  return deps.store.ensureAccount(identity, newUserId(random), deps.clock.now());
}

/** The caller's account read again, so that counts reflect writes made since authentication. */
export async function currentAccount(deps: Pick<AccountDeps, 'store'>, account: Account): Promise<Account> {
  return (await deps.store.findAccount(account.id)) ?? account;
}

/**
 * Whether a token still counts: not expired, or an expired OAuth access token whose client may still renew it (the
 * grant is alive, and revoking the token ends it).
 */
export function isLive(token: TokenInfo, now: number): boolean {
  return token.expiresAt === null || token.expiresAt > now || (token.renewableUntil ?? 0) > now;
}

/**
 * An account's live tokens (`isLive`), oldest first as the store orders them, with pending last uses folded in.
 */
export async function listTokens(deps: AccountDeps, accountId: string): Promise<TokenInfo[]> {
  const now = deps.clock.now();
  const tokens = await deps.store.listActiveTokens(accountId);
  return tokens.filter((token) => isLive(token, now)).map((token) => withPendingUse(token, deps.tokenUses));
}

/** Mints a token for an account. The plaintext is returned once and only its SHA-256 hash is stored. */
export async function issueToken(
  store: AccountStore,
  clock: Clock,
  accountId: string,
  label: string | null,
  random?: RandomInt,
): Promise<{ token: string; info: TokenInfo }> {
  const token = newApiToken(random);
  const hash = sha256Hex(token);
  const cut = label === null ? null : [...label].slice(0, MAX_TOKEN_LABEL_CHARS).join('') || null;
  const info = await store.createToken({ id: tokenIdFromHash(hash), hash, accountId, label: cut, now: clock.now() });
  return { token, info };
}

export interface Caller {
  readonly account: Account;
  readonly token: TokenInfo;
}

/**
 * Keeps last_used_at without a database write per request: uses are held in memory and written in batches
 * (never moving a time backwards), so the value may lag by one flush interval.
 */
export interface TokenUseRecorder {
  touch(tokenId: string, at: number): void;
  /** The newest unflushed use of a token, if any. */
  pending(tokenId: string): number | undefined;
  flush(): Promise<void>;
}

export function createTokenUseRecorder(store: AccountStore): TokenUseRecorder {
  let uses = new Map<string, number>();
  return {
    touch(tokenId, at) {
      const previous = uses.get(tokenId);
      if (previous === undefined || previous < at) uses.set(tokenId, at);
    },
    pending: (tokenId) => uses.get(tokenId),
    async flush() {
      if (uses.size === 0) return;
      const batch = uses;
      uses = new Map();
      try {
        await store.recordTokenUse(batch);
      } catch (error) {
        for (const [id, at] of batch) if ((uses.get(id) ?? 0) < at) uses.set(id, at);
        throw error;
      }
    },
  };
}

/** The token as the caller should see it, with a pending last use folded in. */
export function withPendingUse(token: TokenInfo, recorder: TokenUseRecorder): TokenInfo {
  const pending = recorder.pending(token.id);
  return pending === undefined || (token.lastUsedAt ?? 0) >= pending ? token : { ...token, lastUsedAt: pending };
}

/**
 * Resolves an Authorization header to the calling account (docs/api.md 5.8: missing or not Bearer -> 401 unauthorized;
 * malformed, bad checksum, unknown, revoked or expired -> 401 invalid_token).
 */
export async function authenticate(
  store: Pick<AccountStore, 'findActiveToken'>,
  clock: Clock,
  recorder: TokenUseRecorder,
  header: string | undefined,
): Promise<Caller> {
  const match = header === undefined ? null : /^Bearer[ ]+(\S*)\s*$/i.exec(header);
  if (match === null) throw new ApiError('unauthorized');
  const token = match[1] ?? '';
  if (!isWellFormedToken(token)) throw new ApiError('invalid_token');
  const found = await store.findActiveToken(sha256Hex(token));
  if (found === undefined) throw new ApiError('invalid_token');
  const now = clock.now();
  if (found.token.expiresAt !== null && found.token.expiresAt <= now) {
    throw new ApiError('invalid_token', {
      message: 'The token expired; an OAuth client renews it with its refresh token.',
    });
  }
  recorder.touch(found.token.id, now);
  return found;
}

/**
 * Revokes one of an account's tokens, with its OAuth grant (404 for an unknown id or another account's token).
 */
export async function revokeOwnToken(
  deps: Pick<AccountDeps, 'store' | 'clock'>,
  accountId: string,
  tokenId: string,
): Promise<void> {
  if (!(await deps.store.revokeToken(tokenId, accountId, deps.clock.now()))) throw new ApiError('not_found');
}
