import type { NetworkPolicy } from './network.js';
import type { SearchedTexts, SearchMatch, SearchTerms } from './search.js';

/** Domain values. Rows never leave storage/: the store maps them to these. Times are Unix milliseconds. */

export type Metadata = Readonly<Record<string, string>>;

export interface Account {
  readonly id: string;
  readonly provider: string;
  readonly subject: string;
  readonly login: string;
  readonly createdAt: number;
  readonly dropCount: number;
}

export interface TokenInfo {
  readonly id: string;
  readonly accountId: string;
  readonly label: string | null;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  /** When the token stops working (Unix ms); null: never (device-flow and operator tokens). */
  readonly expiresAt: number | null;
  /**
   * The OAuth client the token was issued to (docs/api.md, "Remote MCP and OAuth"), with its registered name (null
   * if the client is gone); null for device-flow and operator tokens.
   */
  readonly oauthClient: { readonly id: string; readonly name: string | null } | null;
  /**
   * Until when the client may exchange the refresh token issued with this token for a successor (Unix ms); null
   * when there is none (not an OAuth token, or its refresh token was spent).
   */
  readonly renewableUntil: number | null;
}

/** A drop as the owner sees it (never includes HTML bodies). */
export interface DropRecord {
  readonly slug: string;
  readonly accountId: string;
  readonly title: string;
  readonly description: string | null;
  readonly locked: boolean;
  /** Bumped on every passcode change; capabilities signed for an older generation stop working. */
  readonly passcodeGeneration: number;
  readonly latestVersion: number;
  readonly versionCount: number;
  readonly viewCount: number;
  /** Who may comment (docs/api.md, "Comments"). */
  readonly comments: CommentSetting;
  readonly metadata: Metadata;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the drop stops being served (docs/api.md, "Expiry"); null: never. */
  readonly expiresAt: number | null;
  /**
   * The `{id}` of the drop's own origin (domain/content-origin.ts). Null only for a drop an instance older than
   * migration 0008 made during a rolling upgrade: it is served on the raw path alone (docs/decisions/0024).
   */
  readonly contentLabel: string | null;
  /** What the drop's documents may load (domain/network.ts). */
  readonly network: NetworkPolicy;
  /** Who can see it (domain/visibility.ts; docs/api.md, "Who can see a drop"). */
  readonly visibility: Visibility;
  /** Usernames, email addresses and `@domain` entries; in effect only while `visibility` is `people`. */
  readonly allow: readonly string[];
}

/** Who can see a drop: anyone with the URL, anyone signed in, or the owner and those on its `allow` list. */
export type Visibility = 'public' | 'signed_in' | 'people';

/** Whether a drop has expired at `now`: from its expiry instant on, it is gone from every path. */
export const isExpired = (drop: Pick<DropRecord, 'expiresAt'>, now: number): boolean =>
  drop.expiresAt !== null && drop.expiresAt <= now;

export type CommentSetting = 'off' | 'signed_in' | 'open';

export type CommentAuthorKind = 'owner' | 'member' | 'guest';

/** A comment on one version of a drop (docs/api.md, "Comments"). */
export interface CommentRecord {
  readonly id: string;
  readonly slug: string;
  readonly version: number;
  readonly body: string;
  readonly quote: string | null;
  readonly author: { readonly name: string; readonly kind: CommentAuthorKind };
  readonly createdAt: number;
  readonly resolvedAt: number | null;
  readonly resolvedInVersion: number | null;
}

export interface VersionInfo {
  readonly slug: string;
  readonly version: number;
  readonly sizeBytes: number;
  readonly hasContext: boolean;
  readonly createdAt: number;
}

export interface VersionRecord extends VersionInfo {
  readonly context: string | null;
  /** Whether the version has files beside its HTML (docs/api.md, "Many files in one drop"). */
  readonly hasFiles: boolean;
}

/** A file of a version, beside its HTML (docs/api.md, "Many files in one drop"). */
export interface VersionFile {
  /** `/`-separated segments of [A-Za-z0-9._-] (domain/files.ts). */
  readonly path: string;
  /** Bytes of the file as uploaded (decoded). */
  readonly sizeBytes: number;
  /** The Content-Type it is served with, chosen from its extension when it was published. */
  readonly contentType: string;
  /** SHA-256 of its bytes, lowercase hex (also the address of its stored body). */
  readonly sha256: string;
}

/** One file's bytes, for serving: which version it belongs to, what it is, and its bytes. */
export interface VersionFileContent {
  readonly version: number;
  readonly file: VersionFile;
  readonly bytes: Buffer;
}

/** The stored document of one version, for serving. */
export interface VersionContent {
  readonly version: number;
  readonly html: string;
  readonly createdAt: number;
  /** Whether the version has files beside its HTML (docs/api.md, "Many files in one drop"). */
  readonly hasFiles: boolean;
}

/** Viewer renders of one version gathered between two flushes (domain/viewing.ts). Times are Unix ms. */
export interface ViewTally {
  readonly views: number;
  readonly firstAt: number;
  readonly lastAt: number;
  /** Daily viewer hashes (domain/viewer-id.ts), each once. */
  readonly viewers: ReadonlySet<string>;
}

/** One flush of viewer renders: slug, then version number, to its tally. */
export type ViewBatch = ReadonlyMap<string, ReadonlyMap<number, ViewTally>>;

/** Read receipts of one version (docs/api.md, "Read receipts"); zeros and nulls when never viewed. */
export interface VersionViewStats {
  readonly version: number;
  readonly views: number;
  readonly uniqueViewers: number;
  readonly firstViewedAt: number | null;
  readonly lastViewedAt: number | null;
}

/**
 * Read receipts of a drop. `views` is the drop's view_count; the drop's totals keep counting renders of versions
 * deleted since, while `versions` lists the existing versions only, newest first.
 */
export interface DropViewStats {
  readonly views: number;
  readonly uniqueViewers: number;
  readonly firstViewedAt: number | null;
  readonly lastViewedAt: number | null;
  readonly versions: readonly VersionViewStats[];
}

export type SortBy = 'created_at' | 'updated_at' | 'view_count';
export type SortOrder = 'asc' | 'desc';

export interface ListQuery {
  readonly page: number;
  readonly pageSize: number;
  readonly sortBy: SortBy;
  readonly sortOrder: SortOrder;
  /** AND-combined equality filters on metadata values. */
  readonly metadata: Metadata;
  /** Case-insensitive substring of the title; absent or empty means no filter. ANDed with the metadata filters. */
  readonly titleContains?: string;
  /** Leaves out the drops expired at this instant (the domain always sets it). */
  readonly aliveAt?: number;
  /**
   * Full-text search (docs/api.md, "Search"), ANDed with the other filters: drops holding every word, in any field.
   * Best match first when `byRelevance`, else in `sortBy` order.
   */
  readonly search?: { readonly terms: SearchTerms; readonly byRelevance: boolean };
}

/** A drop of a list page; a search's also carries the texts its match is shown from (domain/search.ts). */
export type ListedDrop = DropRecord & { readonly searched?: SearchedTexts };

/** A drop as a list answers it: with what matched, when the list was a search. */
export type FoundDrop = DropRecord & { readonly match?: SearchMatch };

/** Stored state of a device-code request; the public poll status is derived from it (domain/device-flow.ts). */
export type DeviceRequestState = 'pending' | 'approved' | 'denied' | 'claimed';

export interface DeviceRequest {
  readonly id: string;
  /** Normalised user code, 8 characters without the dash. */
  readonly userCode: string;
  readonly label: string | null;
  readonly state: DeviceRequestState;
  readonly accountId: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/**
 * A client that registered itself for OAuth (docs/api.md, "Remote MCP and OAuth"). Every client is public: it has no
 * secret and proves each exchange with PKCE.
 */
export interface OAuthClient {
  readonly id: string;
  /** Its own `client_name`, or a stand-in: untrusted text, shown escaped on the approval page. */
  readonly name: string;
  /** Exact redirect URIs: an authorization request must name one of them character for character. */
  readonly redirectUris: readonly string[];
  /** The registered metadata as answered to the client (RFC 7591 section 3.2.1). */
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

/** A stored authorization code, found by its hash. */
export interface OAuthCodeRecord {
  readonly clientId: string;
  readonly accountId: string;
  readonly codeChallenge: string;
  readonly redirectUri: string;
  readonly resource: string | null;
  readonly expiresAt: number;
  readonly usedAt: number | null;
}

/** A token issued through OAuth, as stored: the access token's hash and expiry, and its refresh token's. */
export interface NewOAuthToken {
  /** The token id (tokenIdFromHash of `hash`). */
  readonly id: string;
  /** SHA-256 of the `hd_` access token. */
  readonly hash: string;
  readonly expiresAt: number;
  /** SHA-256 of the refresh token. */
  readonly refreshHash: string;
  readonly refreshExpiresAt: number;
}

/**
 * What exchanging a refresh token did: issued the successor (the presented token's row revoked), found it spent or
 * revoked (and ended its grant: `reused`), found it expired, or found nothing of this client.
 */
export type TokenRefresh =
  | { readonly kind: 'issued'; readonly accountId: string }
  | { readonly kind: 'reused' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'invalid' };

/** What an RFC 7009 revocation found: a live token of the client (now revoked with its grant), none, or another's. */
export type TokenRevocation = 'revoked' | 'unknown' | 'foreign';

/** What exchanging a code did: issued a token, found the code already used (its token now revoked), or nothing. */
export type CodeRedemption =
  | { readonly kind: 'issued'; readonly accountId: string }
  | { readonly kind: 'replayed' }
  | { readonly kind: 'invalid' };

/** Who a human proved to be through an identity provider (identity/): the account is bound to provider and subject. */
export interface Identity {
  readonly provider: string;
  readonly subject: string;
  readonly login: string;
  /**
   * An email address the provider vouches for (an OIDC `email` with `email_verified` true), lowercase; absent when
   * the provider proves none (docs/operating.md, "Who can see a drop"). Drives the `allow` list's email rules.
   */
  readonly email?: string | undefined;
}
