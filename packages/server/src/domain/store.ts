/**
 * The storage ports: what the domain needs from persistence, one narrow interface per aggregate (accounts and
 * tokens, drops and versions, comments, ...), and `Store`, their intersection, which storage/ implements once over
 * Kysely for every dialect (docs/architecture.md, "Rooms"). A domain module asks for the ports it uses, not all of
 * them. Methods are named after domain actions. Every method is safe to call concurrently from many requests and many
 * processes sharing one database; the atomicity each one guarantees is stated on it.
 */

import type { EventType } from './events.js';
import type { NetworkPolicy } from './network.js';
import type { Finding } from './scan.js';
import type {
  Account,
  CodeRedemption,
  CommentAuthorKind,
  CommentRecord,
  CommentSetting,
  DeviceRequest,
  DropRecord,
  DropViewStats,
  Identity,
  ListedDrop,
  ListQuery,
  Metadata,
  NewOAuthToken,
  OAuthClient,
  OAuthCodeRecord,
  TokenInfo,
  TokenRefresh,
  TokenRevocation,
  VersionContent,
  VersionFile,
  VersionFileContent,
  VersionInfo,
  VersionRecord,
  ViewBatch,
  Visibility,
} from './types.js';

/** A recipient link as stored: the secret only as its SHA-256 (docs/api.md, "Who can see a drop"). */
export interface NewRecipientLink {
  readonly id: string;
  readonly slug: string;
  readonly label: string;
  readonly secretHash: string;
  readonly createdAt: number;
  readonly expiresAt: number | null;
}

export interface RecipientLink extends Omit<NewRecipientLink, 'secretHash'> {
  readonly revokedAt: number | null;
  readonly views: number;
  readonly lastViewedAt: number | null;
}

/** Why a visitor was refused (docs/api.md, "Who can see a drop"). */
export type RefusalReason = 'sign_in_required' | 'not_on_list' | 'wrong_passcode' | 'link_revoked' | 'link_expired';

/** Who an access log entry is about: the provider username of a person, the label of a link. */
export interface AccessWho {
  readonly kind: 'owner' | 'person' | 'link' | 'anonymous';
  readonly name: string | null;
}

/** One entry of a drop's access log: no address or user agent. */
export interface AccessEntry {
  readonly id: string;
  readonly slug: string;
  readonly at: number;
  readonly outcome: 'viewed' | 'refused';
  readonly reason: RefusalReason | null;
  readonly who: AccessWho;
  readonly version: number | null;
}

/** A file of a new version (docs/api.md, "Many files in one drop"): its checked path, its Content-Type, its bytes. */
export interface NewFile {
  readonly path: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
}

export interface NewDrop {
  readonly slug: string;
  readonly accountId: string;
  readonly title: string;
  readonly description: string | null;
  readonly html: string;
  readonly sizeBytes: number;
  readonly context: string | null;
  readonly metadata: Metadata;
  /** Who may comment; `signed_in` when absent. */
  readonly comments?: CommentSetting | undefined;
  /** Encoded scrypt hash, or null for an open drop. */
  readonly passcodeHash: string | null;
  /** Unix ms; null or absent: never expires. */
  readonly expiresAt?: number | null | undefined;
  /** The `{id}` of the drop's own origin; unique. */
  readonly contentLabel: string;
  /** `open` when absent. */
  readonly network?: NetworkPolicy | undefined;
  /** `public` when absent. */
  readonly visibility?: Visibility | undefined;
  /** Empty when absent. */
  readonly allow?: readonly string[] | undefined;
  /** Version 1's files; none when absent. */
  readonly files?: readonly NewFile[] | undefined;
  readonly now: number;
  /** What the look before publishing found in version 1, masked (domain/scan.ts); kept with it. */
  readonly warnings?: readonly Finding[] | undefined;
}

export interface NewVersion {
  readonly html: string;
  readonly sizeBytes: number;
  readonly context: string | null;
  /** The new version's files; none when absent. */
  readonly files?: readonly NewFile[] | undefined;
  /**
   * Restore: the files of this earlier version of the drop become the new version's too, by reference (their stored
   * bodies are counted once more, never copied). The append answers 'version_not_found' when that version is gone.
   */
  readonly filesOf?: number | undefined;
  readonly now: number;
  /** What the look before publishing found in this version, masked (domain/scan.ts); kept with it. */
  readonly warnings?: readonly Finding[] | undefined;
}

/** Fields changed without a new version. `undefined` leaves a field as it is. */
export interface DropChanges {
  readonly title?: string | undefined;
  readonly description?: string | null | undefined;
  readonly metadata?: Metadata | undefined;
  readonly comments?: CommentSetting | undefined;
  /** Unix ms, or null to clear. */
  readonly expiresAt?: number | null | undefined;
  readonly network?: NetworkPolicy | undefined;
  readonly visibility?: Visibility | undefined;
  readonly allow?: readonly string[] | undefined;
}

/**
 * An `If-Match` precondition that did not hold (docs/api.md, "Optimistic concurrency"): the drop's latest version
 * is `latestVersion`, not the one the writer expected. Nothing was changed.
 */
export interface VersionConflict {
  readonly kind: 'version_conflict';
  readonly latestVersion: number;
}

/** A drop past its expiry, as the purge finds it: whose it is, so that its owner's webhooks hear of its deletion. */
export interface ExpiredDrop {
  readonly slug: string;
  readonly accountId: string;
}

/** The answer kept for an idempotency key (docs/api.md, "Idempotency keys"). */
export interface KeptAnswer {
  readonly status: number;
  readonly body: string;
  readonly etag: string | null;
}

/** What claiming an idempotency key found. */
export type IdempotencyClaim =
  /** The key is this request's: run it, then complete or release the key. */
  | { readonly kind: 'claimed' }
  | { readonly kind: 'replay'; readonly answer: KeptAnswer }
  /** The key was used for another request (another method, path or body). */
  | { readonly kind: 'reused' }
  /** The first request with this key is still running; its claim holds until `leaseUntil` unless renewed. */
  | { readonly kind: 'in_progress'; readonly leaseUntil: number };

export interface IdempotencyKeyRef {
  readonly accountId: string;
  readonly key: string;
}

export interface NewComment {
  readonly id: string;
  readonly slug: string;
  /** Undefined: the drop's latest version. */
  readonly version: number | undefined;
  readonly body: string;
  readonly quote: string | null;
  readonly authorName: string;
  readonly authorKind: CommentAuthorKind;
  readonly authorAccountId: string | null;
  readonly now: number;
}

/** Which comments a listing returns: one drop's (or one version's), or every drop's of an owner; created after `since`, oldest first. */
export type CommentScope = { readonly slug: string; readonly version?: number } | { readonly accountId: string };

/**
 * A page of one drop's comments, newest first (the viewer's panel, the console): every filter given must hold.
 * Times are unique per owner (CommentStore.addComment), so `before` pages without skipping or repeating.
 */
export interface CommentPageQuery {
  readonly slug: string;
  /** Made on this version. */
  readonly version?: number;
  /** Resolved in this version, and made on another one. */
  readonly resolvedIn?: number;
  readonly authorKind?: CommentAuthorKind;
  /** Not resolved yet. */
  readonly open?: boolean;
  /** Created before this time (Unix ms, exclusive): the next page. Does not change `total`. */
  readonly before?: number;
}

export interface CommentPage {
  readonly comments: readonly CommentRecord[];
  /** How many comments match the query's filters, on every page. */
  readonly total: number;
}

/** Which comments of a drop a bulk delete removes: these ids, or every guest's. */
export type CommentSelection = { readonly ids: readonly string[] } | { readonly authorKind: 'guest' };

export interface RateWindow {
  /** Stable key of the window, e.g. `m:<account>:<minute start>`. */
  readonly key: string;
  readonly limit: number;
  /** When the window ends (Unix ms); the counter may be purged after that. */
  readonly endsAt: number;
}

/** The database itself: schema, time, liveness. */
export interface StoreLifecycle {
  /** Applies pending migrations in order. Throws (and applies nothing further) on failure. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** The database's current time (Unix ms): the one clock every instance sharing the database agrees on. */
  databaseTime(): Promise<number>;
  /** One round trip to the database (readiness): resolves when it answers, rejects when it cannot. */
  ping(): Promise<void>;
}

/** Accounts, bound to identities, and their API tokens (domain/accounts.ts). */
export interface AccountStore {
  /** Returns the account bound to this identity, creating it on first sight. Atomic per identity. */
  ensureAccount(identity: Identity, newId: string, now: number): Promise<Account>;
  findAccount(id: string): Promise<Account | undefined>;
  /** Accounts whose login equals `login` (one per provider at most). */
  findAccountsByLogin(login: string): Promise<Account[]>;
  listAccounts(): Promise<Account[]>;

  createToken(token: {
    id: string;
    hash: string;
    accountId: string;
    label: string | null;
    now: number;
  }): Promise<TokenInfo>;
  /** The active (not revoked) token with this SHA-256 hash, and its account; whether it expired is the caller's. */
  findActiveToken(hash: string): Promise<{ token: TokenInfo; account: Account } | undefined>;
  /** The account's tokens not revoked, oldest first, expired ones included. */
  listActiveTokens(accountId: string): Promise<TokenInfo[]>;
  /**
   * Revokes one token, and with it its OAuth grant: every live token of the same family (so an id that a refresh has
   * since replaced still revokes its successor). With `accountId`, only a token of that account is revoked.
   * Returns false when nothing was revoked.
   */
  revokeToken(id: string, accountId: string | undefined, now: number): Promise<boolean>;
  /** Records coalesced last-use times; never moves a time backwards. */
  recordTokenUse(uses: ReadonlyMap<string, number>): Promise<void>;
}

/** Drops and their versions (domain/drops.ts, expiry.ts, public-view.ts). */
export interface DropStore {
  /**
   * Creates a drop with version 1. Atomic with the account's drop quota: the account's drop count is incremented
   * only while below `maxDrops`, in the same transaction as the insert. Returns undefined at the quota.
   */
  createDrop(drop: NewDrop, maxDrops: number): Promise<DropRecord | undefined>;
  findDrop(slug: string): Promise<DropRecord | undefined>;
  /** The drop whose own origin has this content label (docs/api.md, "Each drop on its own origin"). */
  findDropByContentLabel(label: string): Promise<DropRecord | undefined>;
  /**
   * One page of the account's drops, plus the total matching the filters (and alive at `query.aliveAt` when set).
   * Never reads HTML. With `query.search` (never without words), only drops whose indexed fields hold every word, each
   * carrying the texts its match is shown from; the index is kept in the transaction of each write, so a drop is found
   * (or no longer found) as soon as its write committed.
   */
  listDrops(accountId: string, query: ListQuery): Promise<{ items: ListedDrop[]; total: number }>;
  /**
   * Appends a version numbered one above the highest number ever issued for the drop, atomically with the
   * version cap (`maxVersions` existing versions), with `changes` and with the precondition `ifLatest` (the drop's
   * latest version must be that number; the check and the insert are one transaction on the drop's row), its HTML
   * and its files kept in the same transaction. Returns 'not_found' when the drop is gone, 'version_limit' at the
   * cap, a VersionConflict when the precondition fails, 'version_not_found' when `filesOf` names no version.
   */
  appendVersion(
    slug: string,
    version: NewVersion,
    changes: DropChanges,
    maxVersions: number,
    ifLatest?: number,
  ): Promise<DropRecord | 'not_found' | 'version_limit' | 'version_not_found' | VersionConflict>;
  /**
   * Changes title, description, metadata, comments setting and/or expiry; bumps updated_at. Undefined when the
   * drop is gone; a VersionConflict when `ifLatest` is given and is not the latest version (one conditional update).
   */
  updateDrop(
    slug: string,
    changes: DropChanges,
    now: number,
    ifLatest?: number,
  ): Promise<DropRecord | undefined | VersionConflict>;
  /** Sets (hash) or removes (null) the passcode, bumps the passcode generation and updated_at. */
  setPasscode(slug: string, passcodeHash: string | null, now: number): Promise<DropRecord | undefined>;
  /**
   * The stored passcode hash of a drop (null when it has none) with its generation, read together;
   * undefined when the drop is gone.
   */
  findPasscode(slug: string): Promise<{ hash: string | null; generation: number } | undefined>;
  /**
   * Deletes a drop, its versions and frees a slot in the account's quota, in one transaction that also releases the
   * versions' stored bodies (deleting those no other version uses). False when it did not exist; a VersionConflict
   * when `ifLatest` is given and is not the latest version.
   */
  deleteDrop(slug: string, ifLatest?: number): Promise<boolean | VersionConflict>;
  /** Drops whose expiry is at or before `now`, at most `limit`, soonest expired first (for the purge). */
  listExpiredDrops(now: number, limit: number): Promise<ExpiredDrop[]>;

  /** Versions of a drop, newest first. Never reads HTML. */
  listVersions(slug: string): Promise<VersionInfo[]>;
  getVersion(slug: string, version: number): Promise<VersionRecord | undefined>;
  /** HTML of one version, or of the latest when `version` is undefined. */
  getVersionContent(slug: string, version: number | undefined): Promise<VersionContent | undefined>;
  /**
   * The files of one version (`version` given) or of every version of the drop, by version number, each list sorted
   * by path; a version without files has no entry. Never reads their bytes.
   */
  listVersionFiles(slug: string, version?: number): Promise<Map<number, VersionFile[]>>;
  /** One file of one version, or of the latest when `version` is undefined, with its bytes; undefined when none. */
  getVersionFile(slug: string, version: number | undefined, path: string): Promise<VersionFileContent | undefined>;
  /**
   * Deletes one version atomically with the rule that a drop keeps at least one version; latest_version becomes
   * the highest remaining number. Its stored bodies (HTML and files) are released in the same transaction, each
   * deleted when nothing else uses it (identical bytes are stored once, docs/decisions/0027 and 0033).
   */
  deleteVersion(
    slug: string,
    version: number,
    now: number,
  ): Promise<DropRecord | 'not_found' | 'version_not_found' | 'last_version'>;
}

/** Comments on drops (domain/comments.ts). */
export interface CommentStore {
  /**
   * Adds a comment to a version (the latest when `version` is undefined), atomically with the per-drop cap
   * (`maxComments` existing comments). Its `created_at` is `now`, or one above the owner's comment clock (the last
   * time given to a comment on any of the owner's drops) when that is not below `now`. The clock is taken under a lock held to the commit, so one owner's
   * comments get strictly increasing times in commit order, on every database: a listing that returned a time has
   * every comment before it.
   */
  addComment(
    comment: NewComment,
    maxComments: number,
  ): Promise<CommentRecord | 'not_found' | 'version_not_found' | 'comment_limit'>;
  /** Comments created after `since`, oldest first, at most `limit`. */
  listComments(scope: CommentScope, since: number, limit: number): Promise<CommentRecord[]>;
  findComment(slug: string, id: string): Promise<CommentRecord | undefined>;
  /** Marks comments of the drop resolved (those not resolved yet); returns the ones it changed. */
  resolveComments(slug: string, ids: readonly string[], inVersion: number, now: number): Promise<CommentRecord[]>;
  /** False when the comment did not exist. */
  deleteComment(slug: string, id: string): Promise<boolean>;
  /** At most `limit` comments matching `query`, newest first, and how many match in all. */
  pageComments(query: CommentPageQuery, limit: number): Promise<CommentPage>;
  /** Deletes the selected comments of the drop in one statement; how many there were. */
  deleteComments(slug: string, selection: CommentSelection): Promise<number>;
}

/** Fixed-window rate counters in the database (domain/rate-counter.ts). */
export interface RateWindowStore {
  /**
   * Counts one hit in each window, atomically: either every window is below its limit and all are incremented,
   * or nothing changes and the index of the first full window is returned.
   */
  hitRateWindows(windows: readonly RateWindow[]): Promise<{ exceeded: number | undefined }>;
  /** Gives back one hit of a window (e.g. a passcode attempt that turned out right). Never below zero. */
  releaseRateWindow(key: string): Promise<void>;
}

/** Service-wide settings shared by every instance. */
export interface SettingStore {
  /**
   * The value of a service-wide setting, storing `proposed` first when it has none. Every instance and every
   * concurrent caller gets the same value (the first one stored wins).
   */
  ensureSetting(key: string, proposed: string): Promise<string>;
}

/** Read receipts: renders counted in batches, read back for owners (domain/viewing.ts, stats.ts). */
export interface ViewStore {
  /**
   * Writes one flush of viewer renders (docs/api.md, "Read receipts") in one transaction: all of it or nothing. Adds
   * each drop's renders to its view_count and each version's to its own count (increments, so batches of several
   * instances add up), moves first and last render times outwards only, and inserts the viewer hashes not stored yet
   * (insert-or-ignore on a unique key). Renders of a drop or version deleted in the meantime are dropped.
   */
  addViews(batch: ViewBatch): Promise<void>;
  /**
   * Read receipts of a drop: its totals and every existing version's, newest first; undefined when the drop is gone.
   * Read in one transaction (one snapshot on PostgreSQL too).
   */
  getDropStats(slug: string): Promise<DropViewStats | undefined>;
}

/** Idempotency keys and their kept answers (http/idempotency.ts). */
export interface IdempotencyStore {
  /**
   * Claims an idempotency key for a request with this fingerprint, atomically across instances: the first caller
   * gets 'claimed' (the row is inserted, running, leased until `leaseUntil`); later callers get the kept answer, or
   * 'reused' (another fingerprint), or 'in_progress' (with the running claim's lease). A key whose kept answer
   * expired, or whose running claim's lease ran out (its instance stopped), is claimed afresh (a lapsed lease only by
   * the same fingerprint).
   */
  claimIdempotencyKey(
    ref: IdempotencyKeyRef,
    fingerprint: string,
    times: { readonly now: number; readonly leaseUntil: number; readonly expiresAt: number },
  ): Promise<IdempotencyClaim>;
  /**
   * Extends a running claim's lease to `leaseUntil` while its request runs (http/idempotency.ts renews it); false
   * when the key is no longer a running claim for this fingerprint (its answer was kept, or it was given up).
   */
  renewIdempotencyKey(ref: IdempotencyKeyRef, fingerprint: string, leaseUntil: number): Promise<boolean>;
  /** Keeps the answer of a claimed key (only while it is still running). */
  completeIdempotencyKey(ref: IdempotencyKeyRef, answer: KeptAnswer): Promise<void>;
  /** Gives up a claimed key that has no answer to keep, so that a retry runs again. */
  releaseIdempotencyKey(ref: IdempotencyKeyRef): Promise<void>;
}

/** Removal of what has lapsed, for the periodic purge. */
export interface HousekeepingStore {
  /**
   * Removes expired rate-window counters, expired idempotency answers, and device requests whose lifetime ended
   * more than `deviceRetentionMs` ago.
   */
  purgeExpired(now: number, deviceRetentionMs: number): Promise<void>;
}

/** The device-code flow's requests (domain/device-flow.ts). */
export interface DeviceRequestStore {
  /** Stores a new pending device request. False when the user code is already taken (the caller draws another). */
  createDeviceRequest(request: {
    id: string;
    pollHash: string;
    userCode: string;
    label: string | null;
    now: number;
    expiresAt: number;
  }): Promise<boolean>;
  findDeviceRequestByCode(userCode: string): Promise<DeviceRequest | undefined>;
  findDeviceRequestByPollHash(pollHash: string): Promise<DeviceRequest | undefined>;
  /**
   * Approves (for `accountId`) or denies a request, only while it is pending and unexpired at `now`.
   * Atomic: of concurrent decisions exactly one succeeds. False when nothing changed.
   */
  decideDeviceRequest(userCode: string, decision: { approve: string } | 'deny', now: number): Promise<boolean>;
  /**
   * The one-time reveal: moves an approved request to claimed and stores the new token for its account, in one
   * transaction. Exactly one of many concurrent callers gets the account id back; the others get undefined.
   */
  claimDeviceRequest(
    pollHash: string,
    token: { id: string; hash: string },
    now: number,
  ): Promise<{ accountId: string; label: string | null } | undefined>;
}

/** OAuth clients and authorization codes (domain/oauth.ts). */
export interface OAuthStore {
  /** Keeps a client that registered itself (RFC 7591). */
  registerOAuthClient(client: OAuthClient): Promise<void>;
  findOAuthClient(id: string): Promise<OAuthClient | undefined>;
  /** Stores an authorization code (by its hash) and notes the client as used, in one transaction. */
  createOAuthCode(code: {
    hash: string;
    clientId: string;
    accountId: string;
    codeChallenge: string;
    redirectUri: string;
    resource: string | null;
    now: number;
    expiresAt: number;
  }): Promise<void>;
  findOAuthCode(hash: string): Promise<OAuthCodeRecord | undefined>;
  /**
   * The one-time exchange of a code of `clientId`, unexpired at `now`: marks it used, revokes the live tokens this
   * client holds for the code's account (one token per client and account), and stores the new token as the first of
   * a new grant, in one transaction; exactly one of many concurrent callers gets `issued`. A code already used is
   * `replayed` and the token it issued is revoked with its grant in the same call (RFC 6749 section 4.1.2).
   */
  redeemOAuthCode(
    hash: string,
    clientId: string,
    token: NewOAuthToken & { readonly label: string },
    now: number,
  ): Promise<CodeRedemption>;
  /**
   * The one-time exchange of a refresh token of `clientId` (by its hash), in one transaction: its row is revoked (the
   * access token with it), any other live token of the client for the account too, and `token` is stored as the
   * successor in the same grant, with the row's label. A refresh token spent by a renewal at most `graceMs` before
   * `now`, whose grant still has a token issued by that renewal alive, is a parallel renewal: `token` is stored in the
   * same grant as well and nothing is revoked (`issued`). Any other refresh token already spent or revoked ends its
   * grant: every live token of the family is revoked, and the answer is `reused`.
   */
  refreshOAuthToken(
    refreshHash: string,
    clientId: string,
    token: NewOAuthToken,
    now: number,
    graceMs: number,
  ): Promise<TokenRefresh>;
  /**
   * RFC 7009: revokes the live token whose access or refresh token has this hash, with its grant, when it was issued
   * to `clientId` (`revoked`); `unknown` when no live token has it; `foreign` when it belongs to another client or is
   * not an OAuth token (nothing revoked).
   */
  revokeOAuthToken(hash: string, clientId: string, now: number): Promise<TokenRevocation>;
  /**
   * Deletes codes that expired before `codesBefore`, clients registered before `unusedClientsBefore` never used, and
   * OAuth token rows whose refresh token expired before `tokensBefore` (spent, revoked or abandoned: unusable).
   */
  purgeOAuth(cutoffs: {
    readonly codesBefore: number;
    readonly unusedClientsBefore: number;
    readonly tokensBefore: number;
  }): Promise<void>;
}

/** What the look before publishing found in each version, kept with it (domain/scan.ts). */
export interface WarningStore {
  /**
   * The kept findings of each version of `slug` that has any, by version number (a clean version has no entry).
   * Findings are written with their version, in its transaction (NewVersion.warnings), and deleted with it.
   */
  listVersionWarnings(slug: string): Promise<Map<number, Finding[]>>;
}

/** A drop's recipient links and access log (domain/recipient-links.ts, domain/access-log.ts). */
export interface AccessStore {
  /** Keeps a new link; the drop must exist (its links go with it). */
  createLink(link: NewRecipientLink): Promise<void>;
  /** A drop's links, newest first. */
  listLinks(slug: string): Promise<RecipientLink[]>;
  /** The link whose secret has this SHA-256, of this drop; undefined for none. */
  findLinkBySecretHash(slug: string, secretHash: string): Promise<RecipientLink | undefined>;
  findLink(slug: string, id: string): Promise<RecipientLink | undefined>;
  /** Marks the link revoked at `now` (once: a second revoke keeps the first time); false when there is no such link. */
  revokeLink(slug: string, id: string, now: number): Promise<boolean>;
  /** Counts one view opened by the link. */
  countLinkView(id: string, now: number): Promise<void>;
  /** Appends entries to access logs; entries of drops deleted meanwhile are left out. */
  appendAccess(entries: readonly AccessEntry[]): Promise<void>;
  /** A drop's log entries at or after `since`, newest first, at most `limit`. */
  listAccess(slug: string, since: number, limit: number): Promise<AccessEntry[]>;
  /** Deletes log entries older than `before`. */
  purgeAccess(before: number): Promise<void>;
}

/** A registered webhook endpoint (docs/api.md, "Webhooks"); its secret only sealed (keys/sealed-box.ts). */
export interface WebhookRecord {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  readonly events: readonly EventType[];
  /** Only this drop's events; null: every drop of the account. */
  readonly slug: string | null;
  readonly sealedSecret: string;
  readonly createdAt: number;
  readonly disabledAt: number | null;
  /** When the current run of failures began; null after a success. */
  readonly failingSince: number | null;
}

/** One event for one endpoint, put in the outbox (its `id` is the `webhook-id` of every attempt). */
export interface NewDelivery {
  readonly id: string;
  readonly webhookId: string;
  /** An event type, or `webhook.test` (the console's test button). */
  readonly type: EventType | 'webhook.test';
  /** The exact body every attempt sends. */
  readonly body: string;
  readonly createdAt: number;
}

/** A delivery claimed for one attempt, with what the attempt needs. */
export interface ClaimedDelivery extends NewDelivery {
  /** Attempts so far, this one included. */
  readonly attempts: number;
  readonly url: string;
  readonly sealedSecret: string;
}

/** One attempt as the deliveries log shows it. */
export interface DeliveryAttempt {
  readonly eventId: string;
  readonly type: string;
  readonly at: number;
  /** `delivered`; `retrying` (a retry is scheduled at `nextRetryAt`); `failed` (given up). */
  readonly outcome: 'delivered' | 'retrying' | 'failed';
  readonly httpStatus: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly nextRetryAt: number | null;
}

/** The outcome of an attempt, for `recordAttempt`. */
export interface AttemptRecord extends DeliveryAttempt {
  readonly webhookId: string;
  /** A failing endpoint whose failures began this long before `at` (or earlier) is disabled at `at`. */
  readonly disableAfterMs: number;
  /** Attempts kept in the log per endpoint (the newest). */
  readonly keep: number;
}

/** Webhook endpoints, their outbox and their log (migration 0016; domain/webhooks.ts). */
export interface WebhookStore {
  createWebhook(webhook: WebhookRecord): Promise<void>;
  /** The account's endpoints, oldest first. */
  listWebhooks(accountId: string): Promise<WebhookRecord[]>;
  /** Deletes the account's endpoint with its outbox rows and log; false when it has none with that id. */
  deleteWebhook(accountId: string, id: string): Promise<boolean>;
  findWebhook(id: string): Promise<WebhookRecord | undefined>;
  /** Puts deliveries in the outbox, due now (`createdAt`). */
  enqueueDeliveries(deliveries: readonly NewDelivery[]): Promise<void>;
  /**
   * Claims one due delivery of an enabled endpoint (pending, due at `now`, not leased or its lease lapsed) until
   * `leaseUntil`, counting the attempt. Atomic: of concurrent claims on any instance, one gets a given row.
   */
  claimDelivery(now: number, leaseUntil: number): Promise<ClaimedDelivery | undefined>;
  /**
   * Records an attempt in one transaction: the log (trimmed to the newest `keep`), the outbox row (delivered,
   * rescheduled at `nextRetryAt` and unleased, or failed) and the endpoint's run of failures (and disabling it).
   */
  recordAttempt(deliveryId: string, attempt: AttemptRecord): Promise<void>;
  /** The newest `limit` attempts of an endpoint, newest first. */
  listAttempts(webhookId: string, limit: number): Promise<DeliveryAttempt[]>;
  /** Deletes outbox rows no longer pending that were created before `before`. */
  purgeDeliveries(before: number): Promise<void>;
}

/** A version's screenshot, stored as a body (docs/decisions/0038-previews-and-embeds.md). */
export interface StoredPreview {
  readonly png: Uint8Array;
  /** SHA-256 of the PNG's bytes, lowercase hex (its body's address). */
  readonly sha256: string;
}

/** Versions' screenshots (domain/previews.ts, serve/previews.ts). */
export interface PreviewStore {
  /** The screenshot kept for this version, or undefined when it has none (or is gone). */
  findPreview(slug: string, version: number): Promise<StoredPreview | undefined>;
  /**
   * Keeps a version's screenshot as a stored body (identical bytes stored once, counted like a version's HTML), in
   * one transaction under the drop's row lock, so that it cannot outlive its version: it goes with its version and
   * its drop (deleteVersion, deleteDrop). False when nothing was kept: the version is gone or already has one.
   */
  keepPreview(slug: string, version: number, png: Uint8Array, now: number): Promise<boolean>;
}

/** A version of an imported drop (docs/api.md, "Export and import"), checked against the limits, read from the archive. */
export interface ImportedVersion {
  readonly version: number;
  readonly html: string;
  readonly sizeBytes: number;
  readonly context: string | null;
  readonly files: readonly NewFile[];
  readonly createdAt: number;
  /** What the look before publishing found in it, masked (domain/scan.ts). */
  readonly warnings?: readonly Finding[] | undefined;
}

/** A comment of an imported drop, with its times as they were. */
export interface ImportedComment {
  readonly id: string;
  readonly version: number;
  readonly body: string;
  readonly quote: string | null;
  readonly authorName: string;
  readonly authorKind: CommentAuthorKind;
  readonly createdAt: number;
  readonly resolvedAt: number | null;
  readonly resolvedInVersion: number | null;
}

/** A drop recreated from an archive: its fields, its source (the archive's id of it) and its versions in order. */
export interface ImportedDrop {
  readonly slug: string;
  readonly accountId: string;
  /** `<exporting account id>/<slug in the archive>`: importing the same drop again finds it. */
  readonly source: string;
  readonly title: string;
  readonly description: string | null;
  readonly metadata: Metadata;
  readonly comments: CommentSetting;
  readonly passcodeHash: string | null;
  readonly expiresAt: number | null;
  readonly contentLabel: string;
  readonly network: NetworkPolicy;
  /** Who may see it (docs/api.md, "Who can see a drop"), as it was exported, checked as a write's. */
  readonly visibility: Visibility;
  readonly allow: readonly string[];
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Versions in increasing order, each read when the store reaches it. At least one. */
  readonly versions: () => AsyncIterable<ImportedVersion>;
  readonly commentList: readonly ImportedComment[];
  /** When the import ran (Unix ms). */
  readonly now: number;
}

/** Drops brought in from an export (domain/import.ts). */
export interface ImportStore {
  /** The slug of the live drop this account imported from `source`, if any. */
  findImportedDrop(accountId: string, source: string): Promise<string | undefined>;
  /**
   * Creates a drop with all its versions, files, contexts and comments and notes its source, in one transaction:
   * all of it or nothing. Atomic with the account's drop quota (as createDrop) and with the source: of two imports of
   * the same drop exactly one creates it, the other gets 'already_imported' (a source whose drop was deleted since is
   * free again). Each version's bodies are encoded when the store reaches it, so a drop's versions are never all in
   * memory. Moves the owner's comment clock past the imported comments' times.
   */
  importDrop(drop: ImportedDrop, maxDrops: number): Promise<DropRecord | 'quota' | 'already_imported'>;
}

/** Everything storage/ implements: the intersection of the ports above. */
export interface Store
  extends StoreLifecycle,
    AccountStore,
    DropStore,
    CommentStore,
    RateWindowStore,
    SettingStore,
    ViewStore,
    IdempotencyStore,
    HousekeepingStore,
    DeviceRequestStore,
    OAuthStore,
    WarningStore,
    AccessStore,
    WebhookStore,
    PreviewStore,
    ImportStore {}
