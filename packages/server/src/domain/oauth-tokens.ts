/**
 * The tokens an OAuth client holds (docs/api.md, "Remote MCP and OAuth";
 * docs/decisions/0030-expiring-oauth-tokens-with-rotating-refresh.md): an `hd_` access token that works for an hour
 * and a refresh token that renews it once (OAuth 2.1 section 4.3: rotation), each renewal issuing the next pair, for
 * 30 days after the last one. A spent refresh token presented again ends the grant, unless its client presents it
 * within seconds of the renewal that spent it while that renewal's pair still lives (parallel requests after an
 * expiry: REFRESH_REUSE_GRACE_MS); one live token per client and account. Both are stored as SHA-256 hashes only. Device-flow and operator tokens are not these: they do not
 * expire (domain/accounts.ts).
 */
import type { Clock } from './clock.js';
import { newApiToken, type RandomInt, randomBase62, sha256Hex, tokenIdFromHash } from './ids.js';
import type { OAuthStore } from './store.js';
import type { NewOAuthToken } from './types.js';

/** How long an access token issued through OAuth works; then its client renews it with the refresh token. */
export const ACCESS_TOKEN_TTL_MS = 3_600_000;
/** How long a refresh token may wait for its one use; each renewal starts a new 30 days (sliding). */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3_600_000;
/**
 * A spent refresh token presented again by its own client this soon after the renewal that spent it, while the pair
 * that renewal issued still lives, is a parallel renewal, not a theft: an MCP client whose several requests are
 * refused at once after the hour renews once per request (docs/decisions/0045-a-parallel-renewal-is-not-a-reuse.md).
 */
export const REFRESH_REUSE_GRACE_MS = 30_000;
/** A token row is deleted this long after its refresh token expired (it can then neither work nor be renewed). */
export const TOKEN_RETENTION_MS = 24 * 3_600_000;
/** Refresh tokens: `hdr_` and 43 base62 characters (256 bits); never accepted as a bearer token. */
const REFRESH_PREFIX = 'hdr_';

/** A refusal in OAuth's terms: `error` is the RFC's code (invalid_redirect_uri, invalid_grant, ...). */
export class OAuthRefusal extends Error {
  override readonly name = 'OAuthRefusal';
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the token endpoint answers (RFC 6749 section 5.1), as the SDK's handler sends it. */
export interface IssuedTokens {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  /** Seconds. */
  readonly expires_in: number;
  readonly refresh_token: string;
}

export interface OAuthTokenDeps {
  readonly store: OAuthStore;
  readonly clock: Clock;
  readonly random?: RandomInt;
}

/** A new access token and refresh token: the answer to the client, and what is stored (hashes and expiries). */
export function newTokenPair(deps: Pick<OAuthTokenDeps, 'random'>, now: number) {
  const access = newApiToken(deps.random);
  const refresh = `${REFRESH_PREFIX}${randomBase62(43, deps.random)}`;
  const hash = sha256Hex(access);
  const stored: NewOAuthToken = {
    id: tokenIdFromHash(hash),
    hash,
    expiresAt: now + ACCESS_TOKEN_TTL_MS,
    refreshHash: sha256Hex(refresh),
    refreshExpiresAt: now + REFRESH_TOKEN_TTL_MS,
  };
  const issued: IssuedTokens = {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_MS / 1000,
    refresh_token: refresh,
  };
  return { issued, stored };
}

/**
 * Exchanges a refresh token of `clientId` for the next pair (RFC 6749 section 6), spending it: the token it came
 * with stops working, and a second use of it ends the grant (OAuth 2.1 section 4.3.1), unless it is the same
 * client's parallel renewal (REFRESH_REUSE_GRACE_MS). Refusals are invalid_grant.
 */
export async function refreshTokens(deps: OAuthTokenDeps, clientId: string, refreshToken: string) {
  const now = deps.clock.now();
  const { issued, stored } = newTokenPair(deps, now);
  const outcome = await deps.store.refreshOAuthToken(
    sha256Hex(refreshToken),
    clientId,
    stored,
    now,
    REFRESH_REUSE_GRACE_MS,
  );
  if (outcome.kind === 'issued') return issued;
  const why = {
    reused: 'the refresh token was already used: the grant is revoked, sign in again',
    expired: 'the refresh token expired: sign in again',
    invalid: 'unknown refresh token',
  }[outcome.kind];
  throw new OAuthRefusal('invalid_grant', why);
}

/**
 * RFC 7009: revokes an access or refresh token this client holds, with the whole grant (the other token of the pair
 * and every successor). An unknown, expired or already revoked token is not an error (section 2.2); a live token
 * issued to another client, or not through OAuth, is refused and left alone (section 2.1).
 */
export async function revokeClientToken(deps: OAuthTokenDeps, clientId: string, token: string): Promise<void> {
  const found = await deps.store.revokeOAuthToken(sha256Hex(token), clientId, deps.clock.now());
  if (found === 'foreign') throw new OAuthRefusal('unauthorized_client', 'this token was not issued to this client');
}
