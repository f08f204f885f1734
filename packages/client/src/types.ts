/** The API's JSON shapes (docs/api.md section 2). Field names are the wire names. */

/** Owner-only tags: flat string map (docs/api.md 2.2). */
export type Metadata = Record<string, string>;

/** docs/api.md 2.1; the service always sends every field. Times are Unix milliseconds. */
export interface Drop {
  readonly slug: string;
  readonly title: string;
  /** "" when none. */
  readonly description: string;
  /** Public viewer: {base_url}/p/<slug>. */
  readonly url: string;
  /** Raw document: {base_url}/p/<slug>/raw. */
  readonly raw_url: string;
  /** True while a passcode is set. */
  readonly locked: boolean;
  readonly latest_version: number;
  readonly view_count: number;
  /** Who may comment on it (docs/api.md, "Comments"). */
  readonly comments: CommentSetting;
  readonly metadata: Metadata;
  readonly created_at: number;
  readonly updated_at: number;
  /**
   * When the drop expires (Unix ms), or null for never. From then on its pages answer 410 and the API 404
   * `not_found`; the service deletes it within the hour.
   */
  readonly expires_at: number | null;
  /**
   * The drop on its own origin (a content host of its own, such as `http://<label>.localhost:8787/`; ends with `/`),
   * where localStorage, IndexedDB and cookies work; null when the service has no content origin configured
   * (docs/api.md, "Each drop on its own origin"). Read-only.
   */
  readonly content_url: string | null;
  /** What the drop may load from the network (docs/api.md, "Each drop on its own origin"); `open` by default. */
  readonly network: NetworkPolicy;
  /** Who can see it (docs/api.md, "Who can see a drop"); `public` by default. Older services omit it. */
  readonly visibility?: Visibility;
  /** Usernames, email addresses and `@domain` entries of a `people` drop; `[]` by default. */
  readonly allow?: readonly string[];
  /**
   * Only on the answer of a write that made a version (create, update, restore): what the service's look before
   * publishing found in it that looks like a secret or personal data (docs/api.md, "A look before publishing");
   * absent when clean. The version is public: remove the secret, publish again, and rotate it.
   */
  readonly warnings?: readonly ScanWarning[];
  /** Only on the drops of a search (`q`, `searchDrops`): what matched (docs/api.md, "Search"). */
  readonly match?: DropMatch;
}

/** What matched in a drop a search found. */
export interface DropMatch {
  /** Plain text around the first word found (not HTML), `…` where it was cut. */
  readonly snippet: string;
  /** The fields holding a word of the query, in this order: title, description, content (the text), context. */
  readonly fields: readonly ('title' | 'description' | 'content' | 'context')[];
}

/** One finding of the look before publishing: the match itself is never sent, only a masked excerpt. */
export interface ScanWarning {
  readonly kind: 'secret' | 'personal_data';
  /** The rule that matched, e.g. `htmldrop/aws-access-key-id`, `htmldrop/jwt`, `personal/iban`. */
  readonly rule: string;
  /** `html`, `context` or `files/<path>`. */
  readonly where: string;
  /** The line of that text, from 1. */
  readonly line: number;
  /** The match masked: at most its first and last 4 characters. */
  readonly excerpt: string;
}

/**
 * What a finding does: `warn` (the default) publishes and answers warnings; `block` refuses the write with
 * `sensitive_content` (its `details.findings` are the warnings) and stores nothing. The operator may force `block`.
 */
export type ScanMode = 'warn' | 'block';

/**
 * What a drop may load from the network, enforced by the service with a Content-Security-Policy (docs/api.md, "Each
 * drop on its own origin"): `open` (anything; the default), `none` (nothing from the network: no fetch, images,
 * scripts, fonts or frames from other hosts, no form posts), or 1 to 10 origins (`https://cdn.jsdelivr.net`: http or
 * https, host, optional port; no path, no trailing slash) it may load from and nothing else. See parseNetwork().
 */
export type NetworkPolicy = 'open' | 'none' | readonly string[];

/**
 * Who may comment on a drop: `off`; `signed_in` (anyone signed in through the service's identity provider; the
 * default); `open` (anyone who can view it, with a typed name). The owner always may.
 */
export type CommentSetting = 'off' | 'signed_in' | 'open';

/** A comment on one version of a drop (docs/api.md, "Comments"). Times are Unix milliseconds. */
export interface Comment {
  /** `c_` and base62 characters. */
  readonly id: string;
  /** Only in the listing across all drops (`listComments({ all: true })`). */
  readonly slug?: string;
  /** The version commented on. */
  readonly version: number;
  readonly body: string;
  /** The text of the document the comment is about, or null. */
  readonly quote: string | null;
  readonly author: { readonly name: string; readonly kind: 'owner' | 'member' | 'guest' };
  /** Strictly increasing per owner: the last one is the next `since`. */
  readonly created_at: number;
  readonly resolved_at: number | null;
  /** The version that resolved it (a PUT with `resolves`, or the latest version when resolved by id). */
  readonly resolved_in_version: number | null;
}

/** GET /api/drops/<slug>/comments and GET /api/comments. */
export interface CommentList {
  readonly data: Comment[];
}

/** POST /api/drops/<slug>/comments. */
export interface CommentInput {
  /** 1 to 4000 characters. */
  readonly body: string;
  /** The version commented on; default the latest. */
  readonly version?: number;
  /** The passage of the document the comment is about (at most 1000 characters). */
  readonly quote?: string | null;
}

/** Which comments a listing covers: one drop by slug, or every drop of the caller. */
export type CommentScope = string | { readonly all: true };

/** The query of a comment listing. */
export interface CommentQuery {
  /** Only comments created after this time (Unix ms); default 0, all. */
  readonly since?: number;
  /**
   * Seconds the service may hold the request when nothing is new (0 to 60; default 0). The request's timeout is
   * raised to at least wait + 15 s.
   */
  readonly wait?: number;
}

/** Who can see a drop (docs/api.md, "Who can see a drop"). */
export type Visibility = 'public' | 'signed_in' | 'people';

/** A recipient link (docs/api.md, "Who can see a drop"); `url` only in the answer that created it. */
export interface RecipientLink {
  readonly id: string;
  readonly label: string;
  readonly created_at: number;
  readonly expires_at: number | null;
  readonly revoked_at: number | null;
  readonly views: number;
  readonly last_viewed_at: number | null;
  /** `{base_url}/p/<slug>?k=<secret>`: in the answer of createLink() only. */
  readonly url?: string;
}

/** One entry of a drop's access log, newest first. */
export interface AccessEntry {
  readonly at: number;
  readonly outcome: 'viewed' | 'refused';
  readonly reason: null | 'sign_in_required' | 'not_on_list' | 'wrong_passcode' | 'link_revoked' | 'link_expired';
  readonly who: { readonly kind: 'owner' | 'person' | 'link' | 'anonymous'; readonly name: string | null };
  readonly version: number | null;
}

/** GET /api/drops/<slug>/stats: read receipts (docs/api.md, "Read receipts"). */
export interface DropStats {
  /** Views each recipient link opened (older services omit it). */
  readonly links?: ReadonlyArray<{ id: string; label: string; views: number; last_viewed_at: number | null }>;
  /** Viewer renders; equals the drop's view_count (may lag by up to 5 s). */
  readonly views: number;
  /** Distinct viewers (address and User-Agent, hashed under a key that changes every UTC day). */
  readonly unique_viewers: number;
  readonly first_viewed_at: number | null;
  readonly last_viewed_at: number | null;
  /** Every existing version, newest first. */
  readonly versions: VersionStats[];
}

export interface VersionStats {
  readonly version: number;
  readonly views: number;
  readonly unique_viewers: number;
  readonly last_viewed_at: number | null;
}

/** docs/api.md 2.7. */
export interface Pagination {
  readonly page: number;
  readonly page_size: number;
  readonly total_items: number;
  readonly total_pages: number;
  readonly sort_by: string;
  readonly sort_order: string;
}

export interface DropList {
  readonly data: Drop[];
  readonly pagination: Pagination;
}

/** A file of a version beside its HTML (docs/api.md, "Many files in one drop"). */
export interface VersionFile {
  /** `/`-separated segments of letters, digits, `.`, `_`, `-`. */
  readonly path: string;
  /** Bytes of the file as uploaded. */
  readonly size_bytes: number;
  /** The Content-Type it is served with (from its extension). */
  readonly content_type: string;
  /** SHA-256 of its bytes, lowercase hex. */
  readonly sha256: string;
}

/** docs/api.md 2.4; newest first. */
export interface VersionListItem {
  readonly version: number;
  /** UTF-8 bytes of the HTML as uploaded. */
  readonly size_bytes: number;
  readonly has_context: boolean;
  readonly created_at: number;
  readonly is_latest: boolean;
  /** The files beside the HTML, sorted by path (absent from a service older than files). */
  readonly files?: readonly VersionFile[];
  /** The HTML plus the files, in bytes: what the version limit applies to. */
  readonly total_bytes?: number;
}

/** docs/api.md 2.3. */
export interface Version {
  readonly slug: string;
  readonly version: number;
  readonly size_bytes: number;
  readonly context: string | null;
  readonly created_at: number;
  readonly is_latest: boolean;
  /** The files beside the HTML, sorted by path (absent from a service older than files). */
  readonly files?: readonly VersionFile[];
  /** The HTML plus the files, in bytes. */
  readonly total_bytes?: number;
}

export interface TokenInfo {
  /** 12 lowercase hex characters: the first characters of the token's SHA-256. */
  readonly id: string;
  readonly label: string | null;
  readonly created_at: number;
  readonly last_used_at: number | null;
  /** When the token stops working (Unix ms); null: never (device-flow and operator tokens). */
  readonly expires_at: number | null;
  /** The OAuth client (an MCP client) the token was issued to; null for device-flow and operator tokens. */
  readonly oauth_client: { readonly id: string; readonly name: string | null } | null;
  /** OAuth tokens: until when the client may renew it with its refresh token (each renewal moves it on). */
  readonly renewable_until: number | null;
}

export interface TokenListItem extends TokenInfo {
  /** True for the token that made the call. */
  readonly current: boolean;
}

/** GET /api/me (docs/api.md 2.5). */
export interface Me {
  readonly user_id: string;
  readonly login: string;
  readonly provider: string;
  readonly created_at: number;
  readonly drop_count: number;
  readonly token: TokenInfo;
}

/** POST /api/auth/start. */
export interface DeviceFlowStart {
  /** XXXX-XXXX, for the human. */
  readonly code: string;
  readonly verification_url: string;
  readonly poll_token: string;
  /** Seconds. */
  readonly expires_in: number;
  /** Seconds. */
  readonly poll_interval: number;
}

export type DeviceFlowStatus = 'pending' | 'verified' | 'claimed' | 'expired' | 'not_found';

/** GET /api/auth/poll. api_token and user_id come exactly once, with status verified. */
export interface DeviceFlowPoll {
  readonly status: DeviceFlowStatus;
  readonly api_token?: string;
  readonly user_id?: string;
}

/** GET /api/onboard with Accept: application/json. */
export interface Onboarding {
  readonly instructions: string;
  readonly public_url: string;
}

/** One file of a version as the API takes it: its text, or its bytes in base64. */
export type FileInput = { readonly content: string } | { readonly content: string; readonly encoding: 'base64' };

/**
 * The files beside a version's HTML (docs/api.md, "Many files in one drop"), by path: `/`-separated segments of
 * letters, digits, `.`, `_`, `-` (not `index.html` at the top, which is the HTML). At most 500 files, and 20 MiB with
 * the HTML, by default. See readFolder() to build it from a directory.
 */
export type DropFiles = Readonly<Record<string, FileInput>>;

export interface CreateDropInput {
  readonly title: string;
  /** A complete HTML document of at most 2097152 bytes (standalone, or loading its `files` by relative URL). */
  readonly html: string;
  /** The files the document loads by relative URL (images, stylesheets, scripts, data, fonts). */
  readonly files?: DropFiles;
  readonly description?: string;
  /** At least 4 characters. */
  readonly passcode?: string;
  /** Reasoning trace for this version, at most 65536 bytes. */
  readonly context?: string;
  readonly metadata?: Metadata;
  /** Who may comment; the service's default is `signed_in`. */
  readonly comments?: CommentSetting;
  /** When it expires (Unix ms), from now + 60 s to now + 365 days; omitted: never. See parseExpires(). */
  readonly expires_at?: number;
  /** What it may load from the network; the service's default is `open`. See parseNetwork(). */
  readonly network?: NetworkPolicy;
  /** Who can see it: `public` (the default), `signed_in`, or `people` (the owner and those in `allow`). */
  readonly visibility?: Visibility;
  /** At most 100 usernames, email addresses or `@domain` entries; in effect while visibility is `people`. */
  readonly allow?: readonly string[];
  /** `block`: refuse (`sensitive_content`, nothing stored) if it looks like it carries secrets or personal data. */
  readonly scan?: ScanMode;
}

/**
 * PUT: always a new version. `metadata` replaces the whole map; omitted leaves it. (The comment setting, the expiry
 * and the network policy are changed with PATCH.)
 */
export interface UpdateDropInput {
  readonly html: string;
  /** The new version's files; a version is complete in itself, so omitted means none. */
  readonly files?: DropFiles;
  readonly title?: string;
  readonly description?: string;
  readonly context?: string;
  readonly metadata?: Metadata;
  /**
   * Ids of comments this version addresses: they are marked resolved in it. An id that is not a comment of this
   * drop is 400 `invalid_arg`, and nothing is written.
   */
  readonly resolves?: readonly string[];
  /** `block`: refuse (`sensitive_content`, nothing stored) if it looks like it carries secrets or personal data. */
  readonly scan?: ScanMode;
  /** Who can see it: `public` (the default), `signed_in`, or `people` (the owner and those in `allow`). */
  readonly visibility?: Visibility;
  /** At most 100 usernames, email addresses or `@domain` entries; in effect while visibility is `people`. */
  readonly allow?: readonly string[];
}

/** PATCH: no new version. `metadata` replaces the whole map; {} clears it. */
export interface PatchDropInput {
  readonly title?: string;
  readonly description?: string;
  readonly metadata?: Metadata;
  readonly comments?: CommentSetting;
  /** When it expires (Unix ms, now + 60 s to now + 365 days); null: never (clears it). */
  readonly expires_at?: number | null;
  /** What it may load from the network (`open` lifts a restriction). */
  readonly network?: NetworkPolicy;
  /** Who can see it: `public` (the default), `signed_in`, or `people` (the owner and those in `allow`). */
  readonly visibility?: Visibility;
  /** At most 100 usernames, email addresses or `@domain` entries; in effect while visibility is `people`. */
  readonly allow?: readonly string[];
}

/** GET /api/drops/<slug>/diff: what changed in the HTML from one version to another. */
export interface DropDiff {
  readonly from: number;
  readonly to: number;
  /** A unified diff of the two documents' HTML (`---`/`+++` headers, `@@` hunks). */
  readonly unified: string;
  /** Lines added and removed. */
  readonly added: number;
  readonly removed: number;
  /** Whether the diff is exact (false when the service simplified a very large one), when the service says. */
  readonly exact?: boolean;
  /** The files added, removed and changed (by content), each sorted by path, when the service says. */
  readonly files?: {
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly string[];
  };
}

/** Which versions a diff compares: `to` defaults to the latest, `from` to the version before `to`. */
export interface DiffQuery {
  readonly from?: number;
  readonly to?: number;
}

export type SortBy = 'created_at' | 'updated_at' | 'view_count';
export type SortOrder = 'asc' | 'desc';

/** GET /api/drops query; names as on the wire. */
export interface ListDropsQuery {
  /** From 1. */
  readonly page?: number;
  /** 1 to 200; the service's default is 50. */
  readonly pageSize?: number;
  readonly sortBy?: SortBy;
  readonly sortOrder?: SortOrder;
  /** Equality filters, combined with AND. */
  readonly metadata?: Metadata;
  /**
   * Full-text search, at most 200 characters (docs/api.md, "Search"): drops holding every word in their title,
   * description, latest text or context, the last word as a prefix; best match first unless `sortBy` is given.
   */
  readonly q?: string;
}

/** POST /api/import: what an import made and skipped (docs/api.md, "Export and import"). */
export interface ImportResult {
  /** Each drop created: its slug in the archive, its new slug, and how many versions it has. */
  readonly imported: ReadonlyArray<{ readonly from: string; readonly slug: string; readonly versions: number }>;
  /**
   * Each drop not created, with why (`already_imported` names the drop made before, in `slug`; `quota_exceeded`,
   * a limit's error code, ...).
   */
  readonly skipped: ReadonlyArray<{ readonly from: string; readonly reason: string; readonly slug?: string }>;
}

// ---- webhooks (docs/api.md, "Webhooks") ----

/** The event types a webhook can subscribe to. */
export type WebhookEventType =
  | 'drop.created'
  | 'drop.version_created'
  | 'drop.deleted'
  | 'comment.created'
  | 'comment.resolved'
  | 'access.refused'
  | 'drop.viewed';

/** POST /api/webhooks. */
export interface WebhookInput {
  /** `https://` and a public address. */
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  /** Only this drop's events; absent or null: every drop of yours. */
  readonly slug?: string | null;
}

/** One delivery attempt, as GET /api/webhooks/<id>/deliveries lists it. */
export interface WebhookDelivery {
  /** The `webhook-id` of the event, the same on every retry. */
  readonly event_id: string;
  readonly type: string;
  readonly at: number;
  readonly status: 'delivered' | 'retrying' | 'failed';
  readonly http_status: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly next_retry_at: number | null;
}

/** A registered endpoint (never with its secret, except in CreatedWebhook). */
export interface WebhookInfo {
  /** `wh_` and 16 base62 characters. */
  readonly id: string;
  readonly url: string;
  readonly events: WebhookEventType[];
  readonly slug: string | null;
  readonly created_at: number;
  /** Set once the endpoint failed for 3 days; it then gets nothing more. */
  readonly disabled_at: number | null;
  /** The newest attempt, once one was made (listings only). */
  readonly last_delivery?: WebhookDelivery;
}

/** The answer of POST /api/webhooks: the endpoint and its signing secret, shown this once. */
export interface CreatedWebhook extends WebhookInfo {
  /** `whsec_…`: verify deliveries with any Standard Webhooks library. */
  readonly secret: string;
}
