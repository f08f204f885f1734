/**
 * OAuth for remote MCP clients, the domain's part (docs/api.md, "Remote MCP and OAuth"): which clients may register
 * (RFC 7591) and which redirect URIs they may name, the one-time codes a human's approval issues, their exchange
 * for an `hd_` token labelled with the client's name, and the per-address budget of the unauthenticated endpoints.
 * The protocol's messages and checks (PKCE S256, parameter validation, error shapes) are the MCP SDK's
 * (http/oauth-provider.ts). Refusals are `OAuthRefusal`s carrying the RFC's error code.
 */
import type { Limits } from '../config.js';
import { MAX_TOKEN_LABEL_CHARS } from './accounts.js';
import { clientGroup } from './client-address.js';
import type { Clock } from './clock.js';
import { type RandomInt, randomBase62, sha256Hex } from './ids.js';
import { type IssuedTokens, newTokenPair, OAuthRefusal, TOKEN_RETENTION_MS } from './oauth-tokens.js';
import { hitWindow, type RateCounter } from './rate-counter.js';
import type { OAuthStore } from './store.js';
import type { OAuthClient, OAuthCodeRecord } from './types.js';

export { OAuthRefusal };

/** How long an approval's code may wait for its exchange. */
export const CODE_TTL_MS = 5 * 60_000;
/** How long an authorization request may wait on the approval page (sign-in included). */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** A client nobody approved within this time after registering is deleted by the purge. */
export const UNUSED_CLIENT_MS = 24 * 3_600_000;
/** An exchanged or expired code is kept this long, so that a replay is recognised and revokes its token. */
export const CODE_RETENTION_MS = 24 * 3_600_000;
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_CHARS = 1_000;
/** Client ids are `hdc_` and 32 base62 characters; a longer one is not looked up. */
export const MAX_CLIENT_ID_CHARS = 64;
/** The label of a client's tokens when it gave no name. */
export const UNNAMED_CLIENT = 'MCP client';

export interface OAuthDeps {
  readonly store: OAuthStore;
  readonly clock: Clock;
  readonly counter: RateCounter;
  readonly limits: Limits;
  readonly random?: RandomInt;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes that are never a place to send a code: they run, show or read something locally. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'blob:', 'about:', 'vbscript:', 'filesystem:']);

/**
 * Why a redirect URI cannot be registered, or undefined: https anywhere; http only to a loopback host (a native
 * client's local listener, RFC 8252 section 7.3); or a private-use scheme (`cursor://...`, RFC 8252 section 7.1).
 * Never a fragment, never a scheme that would run or show something locally.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_CHARS) return `a redirect URI has at most ${MAX_REDIRECT_URI_CHARS} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  if (url.hash !== '' || uri.includes('#')) return `${uri} has a fragment`;
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `${url.protocol} URIs cannot be redirect URIs`;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return `${uri}: http is allowed only to localhost, 127.0.0.1 or [::1]; use https`;
  }
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  if (web && url.hostname !== '[::1]' && !/^[a-z0-9.-]+$/.test(url.hostname)) {
    return `${uri}: a host name of letters, digits, dots and hyphens only`;
  }
  return undefined;
}

/**
 * Which registered redirect URI `requested` names (OAuth 2.1 section 2.3.1): one of them character for character,
 * or, for a loopback one (`http://127.0.0.1`, `[::1]` or `localhost`), the same but for the port, which a native
 * client chooses when it listens (RFC 8252 section 7.3). The port is returned when it differs.
 */
export function matchRedirectUri(
  registered: readonly string[],
  requested: string,
): { readonly index: number; readonly port?: string } | undefined {
  const exact = registered.indexOf(requested);
  if (exact >= 0) return { index: exact };
  let url: URL;
  try {
    url = new URL(requested);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  const index = registered.findIndex((_, i) => redirectUriAt(registered, i, url.port) === requested);
  return index < 0 ? undefined : { index, port: url.port };
}

/** The redirect URI `matchRedirectUri` found: the registered one, with the requested port for a loopback one. */
export function redirectUriAt(registered: readonly string[], index: number, port?: string): string | undefined {
  const uri = registered[index];
  if (uri === undefined || port === undefined) return uri;
  const url = new URL(uri);
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  url.port = port;
  return url.href;
}

/**
 * Strips control and format characters (bidirectional overrides, zero-width marks) and cuts the client's
 * self-declared name to a token label's length.
 */
export function clientName(raw: unknown): string {
  if (typeof raw !== 'string') return UNNAMED_CLIENT;
  const clean = raw.replace(/[\p{Cc}\p{Cf}]/gu, ' ').trim();
  return [...clean].slice(0, MAX_TOKEN_LABEL_CHARS).join('').trim() || UNNAMED_CLIENT;
}

/**
 * The metadata a registration may set: what the answer echoes. `client_secret` and keys are never kept, nor a
 * `scope`: the service has no scopes (a token is its account's), so it neither keeps nor echoes one.
 */
export interface ClientRegistration {
  readonly redirectUris: readonly string[];
  readonly clientName?: string | undefined;
  readonly grantTypes?: readonly string[] | undefined;
  readonly responseTypes?: readonly string[] | undefined;
  readonly softwareId?: string | undefined;
  readonly softwareVersion?: string | undefined;
}

/** Free-text metadata kept only up to this many characters. */
const cut = (value: string) => value.slice(0, 200);

/**
 * Registers a client (RFC 7591) under a new id (`hdc_` and 32 base62 characters). Every client is public: whatever authentication method it asked for, it is
 * registered with `none` and proves each exchange with PKCE, so no secret exists to be stored or leaked.
 */
export async function registerClient(deps: OAuthDeps, registration: ClientRegistration): Promise<OAuthClient> {
  const uris = registration.redirectUris;
  if (uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw new OAuthRefusal('invalid_redirect_uri', `give 1 to ${MAX_REDIRECT_URIS} redirect URIs`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) throw new OAuthRefusal('invalid_redirect_uri', problem);
  }
  if (registration.grantTypes !== undefined && !registration.grantTypes.includes('authorization_code')) {
    throw new OAuthRefusal('invalid_client_metadata', 'grant_types must include authorization_code');
  }
  if (registration.responseTypes !== undefined && !registration.responseTypes.includes('code')) {
    throw new OAuthRefusal('invalid_client_metadata', 'response_types must include code');
  }
  const name = clientName(registration.clientName);
  const id = `hdc_${randomBase62(32, deps.random)}`;
  const now = deps.clock.now();
  const extras = {
    ...(registration.softwareId === undefined ? {} : { software_id: cut(registration.softwareId) }),
    ...(registration.softwareVersion === undefined ? {} : { software_version: cut(registration.softwareVersion) }),
  };
  const client: OAuthClient = {
    id,
    name,
    redirectUris: [...uris],
    metadata: {
      client_id: id,
      client_id_issued_at: Math.floor(now / 1000),
      client_name: name,
      redirect_uris: [...uris],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extras,
    },
    createdAt: now,
  };
  await deps.store.registerOAuthClient(client);
  return client;
}

/** What a human approved: the client, the account, and the request's PKCE challenge, redirect URI and resource. */
export interface Approval {
  readonly clientId: string;
  readonly accountId: string;
  readonly codeChallenge: string;
  readonly redirectUri: string;
  readonly resource: string | null;
}

/** Issues the one-time code of an approval; only its hash is stored. */
export async function issueCode(deps: OAuthDeps, approval: Approval): Promise<string> {
  const code = randomBase62(43, deps.random);
  const now = deps.clock.now();
  await deps.store.createOAuthCode({ hash: sha256Hex(code), ...approval, now, expiresAt: now + CODE_TTL_MS });
  return code;
}

/**
 * The unexpired code of this client, else an invalid_grant refusal. A used one is still answered (its challenge is
 * checked first), so that its replay reaches `exchangeCode`, which refuses it and revokes the token it issued.
 */
export async function liveCode(deps: OAuthDeps, clientId: string, code: string): Promise<OAuthCodeRecord> {
  const found = await deps.store.findOAuthCode(sha256Hex(code));
  if (found === undefined || found.clientId !== clientId) {
    throw new OAuthRefusal('invalid_grant', 'unknown authorization code');
  }
  if (found.expiresAt <= deps.clock.now()) throw new OAuthRefusal('invalid_grant', 'the authorization code expired');
  return found;
}

/**
 * Exchanges a code (its PKCE verifier already checked against `liveCode`'s challenge) for a new `hd_` access token,
 * labelled with the client's name, and its refresh token (oauth-tokens.ts); the tokens the client held for the
 * account before are revoked. The redirect URI and the resource, when sent, must be those the code was issued for
 * (RFC 6749 section 4.1.3, RFC 8707 section 2.2). A second exchange of one code fails, and revokes the grant the first
 * one started (RFC 6749 section 4.1.2).
 */
export async function exchangeCode(
  deps: OAuthDeps,
  client: Pick<OAuthClient, 'id' | 'name'>,
  code: string,
  sent: { readonly redirectUri: string | undefined; readonly resource: string | undefined },
): Promise<IssuedTokens> {
  const found = await liveCode(deps, client.id, code);
  if (sent.redirectUri !== undefined && sent.redirectUri !== found.redirectUri) {
    throw new OAuthRefusal('invalid_grant', 'redirect_uri is not the one the code was issued for');
  }
  if (sent.resource !== undefined && found.resource !== null && sent.resource !== found.resource) {
    throw new OAuthRefusal('invalid_target', 'resource is not the one the code was issued for');
  }
  const now = deps.clock.now();
  const { issued, stored } = newTokenPair(deps, now);
  const label = clientName(client.name);
  const redeemed = await deps.store.redeemOAuthCode(sha256Hex(code), client.id, { ...stored, label }, now);
  if (redeemed.kind !== 'issued') throw new OAuthRefusal('invalid_grant', 'the authorization code was already used');
  return issued;
}

/**
 * The budget of the unauthenticated OAuth endpoints, per client address: `maxAuthStartsPerMinute` (20) token
 * requests a minute, as for device-flow starts, as many revocations a minute, and as many registrations an hour (a
 * client registers once). Returns the seconds to wait, or undefined.
 */
export async function throttleOAuth(
  deps: OAuthDeps,
  endpoint: 'register' | 'token' | 'revoke',
  clientAddress: string,
): Promise<number | undefined> {
  const name = `oauth-${endpoint}:${clientGroup(clientAddress)}`;
  const windowMs = endpoint === 'register' ? 3_600_000 : 60_000;
  const { retryAfterSeconds } = await hitWindow(
    deps.counter,
    name,
    deps.limits.maxAuthStartsPerMinute,
    windowMs,
    deps.clock.now(),
  );
  return retryAfterSeconds;
}

/**
 * Deletes expired codes past their retention, clients nobody approved within a day, and token rows a day after their
 * refresh token expired.
 */
export function purgeOAuth(deps: Pick<OAuthDeps, 'store' | 'clock'>): Promise<void> {
  const now = deps.clock.now();
  return deps.store.purgeOAuth({
    codesBefore: now - CODE_RETENTION_MS,
    unusedClientsBefore: now - UNUSED_CLIENT_MS,
    tokensBefore: now - TOKEN_RETENTION_MS,
  });
}
