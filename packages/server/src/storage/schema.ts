/** Table shapes as Kysely sees them. Only storage/ imports this file. */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  provider: string;
  subject: string;
  login: string;
  created_at: number;
  drop_count: Generated<number>;
  /** The last `created_at` given to a comment on the account's drops (migration 0011). */
  comment_clock: Generated<number>;
}

export interface TokensTable {
  id: string;
  hash: string;
  account_id: string;
  label: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** When the token stops working; null: never (migration 0012). */
  expires_at: number | null;
  /** The OAuth client it was issued to; null for device-flow and operator tokens. */
  oauth_client_id: string | null;
  /** SHA-256 of the refresh token issued with it (OAuth only); spent when the row is revoked. */
  refresh_hash: string | null;
  refresh_expires_at: number | null;
  /** The OAuth grant: the id of the grant's first token, shared by its successors. */
  family_id: string | null;
}

export interface DropsTable {
  slug: string;
  account_id: string;
  title: string;
  description: string | null;
  passcode_hash: string | null;
  passcode_generation: Generated<number>;
  latest_version: number;
  /** Highest version number ever issued: numbers are never reused. */
  last_issued_version: number;
  version_count: number;
  view_count: Generated<number>;
  /** Who may comment: off | signed_in | open (docs/api.md, "Comments"). */
  comments: Generated<string>;
  /** JSON object of string to string. */
  metadata: string;
  created_at: number;
  updated_at: number;
  /** When the drop stops being served and may be deleted (Unix ms); null: never (migration 0007). */
  expires_at: number | null;
  /** The `{id}` of the drop's own origin: lowercase, unique, set at creation (migration 0008 labelled older drops). */
  content_label: string | null;
  /** `open`, `none`, or a JSON array of origins (domain/network.ts). */
  network: Generated<string>;
  /** `public`, `signed_in` or `people` (migration 0015; docs/api.md, "Who can see a drop"). */
  visibility: Generated<string>;
  /** JSON array of usernames, email addresses and `@domain` entries. */
  allow: Generated<string>;
}

/** A recipient link of a drop (migration 0015): the secret only as its SHA-256. */
export interface RecipientLinksTable {
  id: string;
  slug: string;
  label: string;
  secret_hash: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  views: Generated<number>;
  last_viewed_at: number | null;
}

/** One entry of a drop's access log (migration 0015): no address or user agent. */
export interface AccessLogTable {
  id: string;
  slug: string;
  at: number;
  /** `viewed` or `refused`. */
  outcome: string;
  reason: string | null;
  /** `owner`, `person`, `link` or `anonymous`. */
  who_kind: string;
  who_name: string | null;
  version: number | null;
}

export interface VersionsTable {
  slug: string;
  version: number;
  /** The stored body (bodies.hash) holding the version's HTML (migration 0010). */
  body_hash: string;
  size_bytes: number;
  context: string | null;
  created_at: number;
}

/** What the look before publishing found in one version, masked (migration 0014); no row for a clean version. */
export interface VersionWarningsTable {
  slug: string;
  version: number;
  /** JSON array of findings (domain/scan.ts `Finding`). */
  findings: string;
}

/**
 * A version's files beside its HTML (migration 0013; docs/decisions/0033-many-files-in-one-drop.md): each points at
 * a stored body, as the version's HTML does.
 */
export interface VersionFilesTable {
  slug: string;
  version: number;
  /** `/`-separated segments of [A-Za-z0-9._-], case-sensitive (domain/files.ts). */
  path: string;
  /** The stored body (bodies.hash): the SHA-256 of the file's bytes. */
  body_hash: string;
  size_bytes: number;
  /** The Content-Type it is served with, chosen from its extension when published. */
  content_type: string;
}

/**
 * A version's screenshot (migration 0018; docs/decisions/0038-previews-and-embeds.md): a stored body holding the PNG,
 * as a version's HTML and files are.
 */
export interface VersionPreviewsTable {
  slug: string;
  version: number;
  /** The stored body (bodies.hash): the SHA-256 of the PNG's bytes. */
  body_hash: string;
  created_at: number;
}

/** A client that registered itself (RFC 7591; migration 0009). Public: no secret is kept. */
export interface OAuthClientsTable {
  id: string;
  /** The client's own `client_name` (or a stand-in), shown on the approval page and used as its tokens' label. */
  name: string;
  /** JSON array of the exact redirect URIs. */
  redirect_uris: string;
  /** JSON object: the registered metadata as answered to the client. */
  metadata: string;
  created_at: number;
  /** When a human last approved it; null: never (purged a day after registration). */
  last_used_at: number | null;
}

/** A one-time authorization code, kept as its SHA-256 hash (migration 0009). */
export interface OAuthCodesTable {
  hash: string;
  client_id: string;
  account_id: string;
  code_challenge: string;
  redirect_uri: string;
  resource: string | null;
  created_at: number;
  expires_at: number;
  /** When it was exchanged; a second exchange revokes the token the first one issued. */
  used_at: number | null;
  token_id: string | null;
}

/**
 * Version bodies, stored once per distinct content (migration 0010; docs/decisions/0027-compressed-deduplicated-bodies.md).
 */
export interface BodiesTable {
  /** SHA-256 of the bytes (a version's HTML in UTF-8, or a file), lowercase hex. */
  hash: string;
  /** How `data` is encoded: `br` or `identity` (storage/bodies.ts). */
  codec: string;
  data: Buffer;
  /** Length of the bytes. */
  size_bytes: number;
  /** How many versions and version files use this body; the row is deleted when it reaches zero. */
  refs: number;
}

export interface RateWindowsTable {
  key: string;
  count: number;
  ends_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface DeviceRequestsTable {
  id: string;
  poll_hash: string;
  user_code: string;
  label: string | null;
  /** pending | approved | denied | claimed */
  status: string;
  account_id: string | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

export interface CommentsTable {
  id: string;
  slug: string;
  /** The drop's owner, so that a caller's comments across drops are one indexed query. */
  account_id: string;
  version: number;
  body: string;
  quote: string | null;
  author_name: string;
  /** owner | member | guest */
  author_kind: string;
  /** The signed-in author's account (owner or member); null for a guest. */
  author_account_id: string | null;
  /** Strictly increasing per drop owner, so that `since` never skips a comment made in the same millisecond. */
  created_at: number;
  resolved_at: number | null;
  resolved_in_version: number | null;
}

/** Read receipts per drop (migration 0005): the drop's first and last render; the count is drops.view_count. */
export interface DropViewsTable {
  slug: string;
  first_viewed_at: number;
  last_viewed_at: number;
}

/** Distinct daily viewer hashes (domain/viewer-id.ts) that rendered any version of a drop. */
export interface DropViewersTable {
  slug: string;
  viewer: string;
}

/** Read receipts per version: renders, first and last render. */
export interface VersionViewsTable {
  slug: string;
  version: number;
  views: number;
  first_viewed_at: number;
  last_viewed_at: number;
}

/** Distinct daily viewer hashes that rendered one version. */
export interface VersionViewersTable {
  slug: string;
  version: number;
  viewer: string;
}

/** The kept answer of an idempotent request (migration 0007; docs/api.md, "Idempotency keys"). */
export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  fingerprint: string;
  /** Null while the first request runs. */
  status: number | null;
  body: string | null;
  etag: string | null;
  locked_until: number;
  expires_at: number;
}

/** Registered webhook endpoints (migration 0016). `events`: a JSON array of event types. */
export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  events: string;
  slug: string | null;
  /** The signing secret, sealed with a key derived from the service's secret (keys/sealed-box.ts). */
  sealed_secret: string;
  created_at: number;
  disabled_at: number | null;
  /** When the current run of failed attempts began; null after a success. */
  failing_since: number | null;
}

/** The outbox: one row per event and endpoint, `pending` until delivered or given up (migration 0016). */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  type: string;
  body: string;
  created_at: number;
  state: 'pending' | 'delivered' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: number;
  /** Claimed by an instance until then; null when not claimed. */
  lease_until: number | null;
}

/** The attempts' log, the newest 100 per endpoint (migration 0016). */
export interface WebhookAttemptsTable {
  id: string;
  webhook_id: string;
  delivery_id: string;
  type: string;
  at: number;
  outcome: 'delivered' | 'retrying' | 'failed';
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  next_retry_at: number | null;
}

/**
 * A drop's entry of the search index (migration 0017; docs/decisions/0037-full-text-search-words-made-once.md). On
 * SQLite `id` is the rowid of its row in `search_index`, which holds the text; on PostgreSQL the row also holds the
 * latest version's indexed text (`content`) and each field's words as a tsvector (raw SQL, kysely/search.ts).
 */
export interface SearchTextsTable {
  id: Generated<number>;
  slug: string;
  /** The drop's, copied (migration 0020): a search filters by owner and expiry without reading `drops`. */
  account_id: string;
  /** The drop's, kept by a trigger on `drops` (migration 0020). */
  expires_at: number | null;
  /** The drop's, copied (migration 0021): a search sorted by date reads no drop row. */
  created_at: number;
  /** The drop's, kept by a trigger on `drops` (migration 0021). */
  updated_at: number;
}

/** SQLite only: the FTS5 table, a row per drop, each field's folded words (kysely/search.ts). */
export interface SearchIndexTable {
  rowid: number;
  title: string;
  description: string;
  content: string;
  context: string;
}

/**
 * SQLite only (migration 0020): what the contentless `search_index` cannot give back, per entry: the text for snippets
 * and the words, packed (kysely/search.ts). Goes with its `search_texts` row.
 */
export interface SearchPackedTable {
  id: number;
  packed: Uint8Array;
}

/**
 * Drops made by an import (migration 0019; docs/decisions/0039-export-and-import.md): the archive's id of each, so
 * that importing the same archive again creates nothing. The row goes with its drop.
 */
export interface ImportedDropsTable {
  account_id: string;
  /** `<exporting account id>/<slug in the archive>`. */
  source: string;
  slug: string;
  created_at: number;
}

export interface Database {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  search_texts: SearchTextsTable;
  search_index: SearchIndexTable;
  search_packed: SearchPackedTable;
  imported_drops: ImportedDropsTable;
  idempotency_keys: IdempotencyKeysTable;
  drop_views: DropViewsTable;
  drop_viewers: DropViewersTable;
  version_views: VersionViewsTable;
  version_viewers: VersionViewersTable;
  comments: CommentsTable;
  device_requests: DeviceRequestsTable;
  settings: SettingsTable;
  accounts: AccountsTable;
  tokens: TokensTable;
  drops: DropsTable;
  versions: VersionsTable;
  version_warnings: VersionWarningsTable;
  version_files: VersionFilesTable;
  recipient_links: RecipientLinksTable;
  access_log: AccessLogTable;
  version_previews: VersionPreviewsTable;
  bodies: BodiesTable;
  rate_windows: RateWindowsTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
}
