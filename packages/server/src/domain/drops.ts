/**
 * Drop and version actions for an authenticated owner. Inputs are already shape-checked by the HTTP schemas;
 * this module enforces the byte limits, ownership, quotas and version rules (spec 3.2, 8; docs/api.md 3.2 and 8).
 */

import type { Limits } from '../config.js';
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { newContentLabel } from './content-origin.js';
import { type EventSink, reportDropDeleted } from './events.js';
import { checkedExpiry } from './expiry.js';
import { checkVersionBytes, decodeFiles, type FilesInput, totalBytes } from './files.js';
import { newSlug, parseVersionNumber, type RandomInt } from './ids.js';
import { checkedNetwork } from './network.js';
import { hashPasscode } from './passcode.js';
import {
  type Finding,
  lookBeforePublishing,
  type ScanDeps,
  type ScanMode,
  type Scanned,
  versionTexts,
} from './scan.js';
import { matchOf } from './search.js';
import type { DropChanges, DropStore, VersionConflict } from './store.js';
import {
  type CommentSetting,
  type DropRecord,
  type FoundDrop,
  isExpired,
  type ListQuery,
  type Metadata,
  type VersionFile,
  type VersionInfo,
  type VersionRecord,
} from './types.js';
import { checkedAllow, checkedVisibility } from './visibility.js';

/**
 * Told about every change that alters what /p/<slug> serves (cache invalidation, on every instance). Awaited
 * before the write is acknowledged, so a client that saw the answer never gets the old document afterwards.
 */
export interface DropChangeListener {
  dropChanged(slug: string): Promise<void>;
  /**
   * Told, without waiting, that a version was published (a create, a new version, a restore): its preview is asked
   * for, to be made after the write's answer (docs/api.md, "Previews and embeds"). Optional.
   */
  versionPublished?(slug: string, version: number): void;
}

export interface DropDeps {
  readonly store: DropStore;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly listener: DropChangeListener;
  readonly random?: RandomInt;
  /** The look before publishing (domain/scan.ts); none wired: nothing is scanned. */
  readonly scan?: ScanDeps;
  /** Where `drop.*` events go (domain/events.ts): the live streams and the webhooks' outbox; none: nowhere. */
  readonly events?: EventSink;
}

export interface CreateDropInput {
  readonly title: string;
  readonly description?: string | undefined;
  readonly html: string;
  readonly passcode?: string | undefined;
  readonly context?: string | undefined;
  readonly metadata?: Metadata | undefined;
  readonly comments?: CommentSetting | undefined;
  /** Unix ms (docs/api.md, "Expiry"); null or absent: never. */
  readonly expires_at?: number | null | undefined;
  /** `open` when absent (domain/network.ts). */
  readonly network?: unknown;
  /** Who can see it (domain/visibility.ts); absent: `public` on create, unchanged otherwise. */
  readonly visibility?: unknown;
  /** The list of `people` (domain/visibility.ts); absent: empty on create, unchanged otherwise. */
  readonly allow?: unknown;
  /** What a finding of the look before publishing does; the operator's mode when absent (domain/scan.ts). */
  readonly scan?: ScanMode | undefined;
  /** The files beside the HTML (domain/files.ts); none when absent. */
  readonly files?: FilesInput | undefined;
}

export interface NewVersionInput {
  readonly html: string;
  /** The new version's files; a version is complete in itself, so none when absent. */
  readonly files?: FilesInput | undefined;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly context?: string | undefined;
  readonly metadata?: Metadata | undefined;
  /** What a finding of the look before publishing does; the operator's mode when absent (domain/scan.ts). */
  readonly scan?: ScanMode | undefined;
  /** Who can see it (domain/visibility.ts); absent: `public` on create, unchanged otherwise. */
  readonly visibility?: unknown;
  /** The list of `people` (domain/visibility.ts); absent: empty on create, unchanged otherwise. */
  readonly allow?: unknown;
}

export interface DetailsInput {
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly metadata?: Metadata | undefined;
  readonly comments?: CommentSetting | undefined;
  /** Unix ms, null to clear, absent to keep. */
  readonly expires_at?: number | null | undefined;
  /** Absent to keep (domain/network.ts). */
  readonly network?: unknown;
  /** Who can see it (domain/visibility.ts); absent: `public` on create, unchanged otherwise. */
  readonly visibility?: unknown;
  /** The list of `people` (domain/visibility.ts); absent: empty on create, unchanged otherwise. */
  readonly allow?: unknown;
}

/**
 * The `If-Match` precondition of a write (docs/api.md, "Optimistic concurrency"): the version the writer last saw
 * as latest; undefined for none (no header, or `*`, which only asks that the drop exists).
 */
export type IfLatest = number | undefined;

function htmlBytes(html: string, limits: Limits): number {
  const size = Buffer.byteLength(html, 'utf8');
  if (size > limits.maxHtmlBytes) {
    throw new ApiError('html_too_large', {
      message: `The HTML exceeds ${limits.maxHtmlBytes} bytes (got ${size}).`,
      details: { max_bytes: limits.maxHtmlBytes, size_bytes: size },
    });
  }
  return size;
}

function checkedContext(context: string | undefined, limits: Limits): string | null {
  if (context === undefined || context === '') return null;
  const size = Buffer.byteLength(context, 'utf8');
  if (size > limits.maxContextBytes) {
    throw new ApiError('context_too_large', {
      message: `context exceeds ${limits.maxContextBytes} bytes (got ${size}).`,
      details: { max_bytes: limits.maxContextBytes, size_bytes: size },
    });
  }
  return context;
}

/** Hash for a non-empty passcode, null for "" (no gate). */
async function passcodeHashFor(passcode: string | undefined, limits: Limits): Promise<string | null> {
  if (passcode === undefined || passcode === '') return null;
  if ([...passcode].length < limits.minPasscodeChars) {
    throw new ApiError('passcode_too_short', {
      message: `passcode must be at least ${limits.minPasscodeChars} characters.`,
      details: { min_chars: limits.minPasscodeChars },
    });
  }
  return hashPasscode(passcode);
}

function detailChanges(input: DetailsInput, now: number): DropChanges {
  return {
    expiresAt: checkedExpiry(input.expires_at, now),
    title: input.title,
    description: input.description === undefined ? undefined : input.description === '' ? null : input.description,
    metadata: input.metadata,
    comments: 'comments' in input ? input.comments : undefined,
    network: checkedNetwork(input.network),
    visibility: checkedVisibility(input.visibility),
    allow: checkedAllow(input.allow),
  };
}

export async function createDrop(
  deps: DropDeps,
  accountId: string,
  input: CreateDropInput,
): Promise<DropRecord & Scanned> {
  const sizeBytes = htmlBytes(input.html, deps.limits);
  const files = decodeFiles(input.files, sizeBytes, deps.limits);
  const context = checkedContext(input.context, deps.limits);
  const warnings = await lookBeforePublishing(deps.scan, versionTexts(input.html, context, files), input.scan);
  const passcodeHash = await passcodeHashFor(input.passcode, deps.limits);
  const now = deps.clock.now();
  const expiresAt = checkedExpiry(input.expires_at, now) ?? null;
  const network = checkedNetwork(input.network);
  const visibility = checkedVisibility(input.visibility);
  const allow = checkedAllow(input.allow);
  const created = await deps.store.createDrop(
    {
      slug: newSlug(deps.random),
      accountId,
      title: input.title,
      description: input.description || null,
      html: input.html,
      sizeBytes,
      context,
      metadata: input.metadata ?? {},
      comments: input.comments,
      passcodeHash,
      expiresAt,
      contentLabel: newContentLabel(),
      network,
      visibility,
      allow,
      files,
      now,
      warnings,
    },
    deps.limits.maxDropsPerAccount,
  );
  if (created === undefined) {
    throw new ApiError('quota_exceeded', {
      message: `The account already has the maximum of ${deps.limits.maxDropsPerAccount} drops; delete one first.`,
      details: { max_drops: deps.limits.maxDropsPerAccount },
    });
  }
  const data = { title: created.title, version: created.latestVersion };
  await deps.events?.emit({ type: 'drop.created', accountId, slug: created.slug, data, at: now });
  deps.listener.versionPublished?.(created.slug, created.latestVersion);
  return { ...created, warnings };
}

const gone = (slug: string) => new ApiError('not_found', { message: `No drop with slug "${slug}".` });

/** The caller's drop, or 404 not_found (also once it expired: docs/api.md, "Expiry") / 403 forbidden. */
export async function getOwnedDrop(
  deps: { readonly store: Pick<DropStore, 'findDrop'>; readonly clock: Clock },
  accountId: string,
  slug: string,
): Promise<DropRecord> {
  const drop = await deps.store.findDrop(slug);
  if (drop === undefined || isExpired(drop, deps.clock.now())) throw gone(slug);
  if (drop.accountId !== accountId) throw new ApiError('forbidden');
  return drop;
}

/** 412 version_conflict naming the latest version. */
function conflict({ latestVersion }: VersionConflict): ApiError {
  return new ApiError('version_conflict', {
    message: `The drop's latest version is ${latestVersion}, not the one If-Match names; nothing was changed.`,
    details: { latest_version: latestVersion },
  });
}

const isConflict = (value: unknown): value is VersionConflict =>
  typeof value === 'object' && value !== null && (value as VersionConflict).kind === 'version_conflict';

/**
 * One page of the account's drops and how many match. A search (docs/api.md, "Search") without a word in it finds
 * nothing; each drop it finds carries its match (which fields, a snippet).
 */
export async function listDrops(
  deps: Pick<DropDeps, 'store' | 'clock'>,
  accountId: string,
  query: ListQuery,
): Promise<{ items: FoundDrop[]; total: number }> {
  const { search } = query;
  if (search !== undefined && search.terms.words.length === 0) return { items: [], total: 0 };
  const listed = await deps.store.listDrops(accountId, { ...query, aliveAt: deps.clock.now() });
  if (search === undefined) return listed;
  return {
    items: listed.items.map(({ searched, ...drop }) =>
      searched === undefined ? drop : { ...drop, match: matchOf(searched, search.terms) },
    ),
    total: listed.total,
  };
}

export async function addVersion(
  deps: DropDeps,
  accountId: string,
  slug: string,
  input: NewVersionInput,
  ifLatest?: IfLatest,
): Promise<DropRecord & Scanned> {
  await getOwnedDrop(deps, accountId, slug);
  const { files, ...rest } = input;
  return appendChecked(deps, slug, rest, ifLatest, { input: files });
}

/**
 * A version's files as the append takes them: decoded from the request, or (restore) those of an earlier version by
 * reference, after the same limits as an upload (they may have been lowered since).
 */
type FilesOfVersion =
  | { readonly input: FilesInput | undefined }
  | { readonly copyOf: number; readonly files: readonly VersionFile[] };

function filesFor(files: FilesOfVersion, sizeBytes: number, limits: Limits) {
  if ('input' in files) return { files: decodeFiles(files.input, sizeBytes, limits) };
  if (files.files.length > limits.maxFilesPerVersion) {
    throw new ApiError('too_many_files', {
      message: `A version takes at most ${limits.maxFilesPerVersion} files (this one has ${files.files.length}).`,
      details: { max_files: limits.maxFilesPerVersion },
    });
  }
  checkVersionBytes(totalBytes(sizeBytes, files.files), limits);
  return { filesOf: files.copyOf };
}

/** The checks and the append shared by addVersion and restoreVersion; ownership is already checked. */
async function appendChecked(
  deps: DropDeps,
  slug: string,
  input: Omit<NewVersionInput, 'files'>,
  ifLatest: IfLatest,
  files: FilesOfVersion,
): Promise<DropRecord & Scanned> {
  const sizeBytes = htmlBytes(input.html, deps.limits);
  const fileChanges = filesFor(files, sizeBytes, deps.limits);
  const context = checkedContext(input.context, deps.limits);
  // A restore's files are copied by reference, not read: only new files are looked at.
  const newFiles = 'files' in fileChanges ? fileChanges.files : [];
  const warnings = await lookBeforePublishing(deps.scan, versionTexts(input.html, context, newFiles), input.scan);
  const now = deps.clock.now();
  const result = await deps.store.appendVersion(
    slug,
    { html: input.html, sizeBytes, context, now, warnings, ...fileChanges },
    detailChanges(input, now),
    deps.limits.maxVersionsPerDrop,
    ifLatest,
  );
  if (result === 'not_found') throw gone(slug);
  if (result === 'version_not_found' && 'copyOf' in files) throw versionNotFound(slug, files.copyOf);
  if (result === 'version_not_found') throw gone(slug);
  if (isConflict(result)) throw conflict(result);
  if (result === 'version_limit') {
    throw new ApiError('version_limit_reached', {
      message: `The drop already has the maximum of ${deps.limits.maxVersionsPerDrop} versions; delete one first.`,
      details: { max_versions: deps.limits.maxVersionsPerDrop },
    });
  }
  await deps.listener.dropChanged(slug);
  const data = { version: result.latestVersion };
  await deps.events?.emit({ type: 'drop.version_created', accountId: result.accountId, slug, data, at: now });
  deps.listener.versionPublished?.(slug, result.latestVersion);
  return { ...result, warnings };
}

export async function updateDetails(
  deps: DropDeps,
  accountId: string,
  slug: string,
  input: DetailsInput,
  ifLatest?: IfLatest,
): Promise<DropRecord> {
  await getOwnedDrop(deps, accountId, slug);
  const now = deps.clock.now();
  const updated = await deps.store.updateDrop(slug, detailChanges(input, now), now, ifLatest);
  if (updated === undefined) throw gone(slug);
  if (isConflict(updated)) throw conflict(updated);
  await deps.listener.dropChanged(slug);
  return updated;
}

/** Sets, changes ("" removes) the passcode (docs/api.md 3.2: locked exactly while a passcode is set). */
export async function setPasscode(
  deps: DropDeps,
  accountId: string,
  slug: string,
  passcode: string,
): Promise<DropRecord> {
  await getOwnedDrop(deps, accountId, slug);
  const hash = await passcodeHashFor(passcode, deps.limits);
  const updated = await deps.store.setPasscode(slug, hash, deps.clock.now());
  if (updated === undefined) throw gone(slug);
  await deps.listener.dropChanged(slug);
  return updated;
}

export async function deleteDrop(deps: DropDeps, accountId: string, slug: string, ifLatest?: IfLatest): Promise<void> {
  await getOwnedDrop(deps, accountId, slug);
  const deleted = await deps.store.deleteDrop(slug, ifLatest);
  if (isConflict(deleted)) throw conflict(deleted);
  if (!deleted) throw gone(slug);
  await deps.listener.dropChanged(slug);
  await reportDropDeleted(deps.events, { slug, accountId }, 'owner', deps.clock.now());
}

/** The versions of the caller's drop, newest first, each with its files (by version number; none: no entry). */
export async function listVersions(
  deps: DropDeps,
  accountId: string,
  slug: string,
): Promise<{
  drop: DropRecord;
  versions: VersionInfo[];
  files: ReadonlyMap<number, readonly VersionFile[]>;
}> {
  const drop = await getOwnedDrop(deps, accountId, slug);
  const [versions, files] = await Promise.all([deps.store.listVersions(slug), deps.store.listVersionFiles(slug)]);
  return { drop, versions, files };
}

/** A version number given as text (`<n>` of a path, `from`/`to` of a query): 1 to 2^31-1, else 400 naming it. */
export function versionNumberArg(field: string, raw: unknown): number {
  const n = parseVersionNumber(raw);
  if (n === undefined) {
    throw new ApiError('invalid_arg', {
      message: `${field} must be a version number (an integer from 1 to 2147483647), got ${JSON.stringify(String(raw).slice(0, 40))}.`,
      details: { field },
    });
  }
  return n;
}

export const versionNotFound = (slug: string, version: number) =>
  new ApiError('version_not_found', { message: `Drop "${slug}" has no version ${version}.`, details: { version } });

/** One version of the caller's drop, with its files (sorted by path). */
export async function getVersion(
  deps: DropDeps,
  accountId: string,
  slug: string,
  version: number,
): Promise<{ drop: DropRecord; version: VersionRecord; files: readonly VersionFile[] }> {
  const drop = await getOwnedDrop(deps, accountId, slug);
  const [record, files] = await Promise.all([
    deps.store.getVersion(slug, version),
    deps.store.listVersionFiles(slug, version),
  ]);
  if (record === undefined) throw versionNotFound(slug, version);
  return { drop, version: record, files: files.get(version) ?? [] };
}

export async function deleteVersion(
  deps: DropDeps,
  accountId: string,
  slug: string,
  version: number,
): Promise<DropRecord> {
  await getOwnedDrop(deps, accountId, slug);
  const result = await deps.store.deleteVersion(slug, version, deps.clock.now());
  if (result === 'not_found') throw gone(slug);
  if (result === 'version_not_found') throw versionNotFound(slug, version);
  if (result === 'last_version') throw new ApiError('last_version_cannot_be_deleted', { details: { version } });
  await deps.listener.dropChanged(slug);
  return result;
}

/** What the look before publishing found in each version of the caller's drop that has findings, by version. */
export async function versionWarnings(
  deps: DropDeps,
  accountId: string,
  slug: string,
): Promise<ReadonlyMap<number, readonly Finding[]>> {
  await getOwnedDrop(deps, accountId, slug);
  return deps.scan === undefined ? new Map() : deps.scan.store.listVersionWarnings(slug);
}

/**
 * Makes an earlier version current again by appending a copy of its stored html, context and files as a new version
 * (old numbers are never reused; the files by reference, never copied). Limits apply as to any upload: they may have
 * been lowered since that version was stored. Title, description and metadata stay as they are.
 */
export async function restoreVersion(
  deps: DropDeps,
  accountId: string,
  slug: string,
  version: number,
  ifLatest?: IfLatest,
): Promise<DropRecord & Scanned> {
  await getOwnedDrop(deps, accountId, slug);
  const [content, record, files] = await Promise.all([
    deps.store.getVersionContent(slug, version),
    deps.store.getVersion(slug, version),
    deps.store.listVersionFiles(slug, version),
  ]);
  if (content === undefined || record === undefined) throw versionNotFound(slug, version);
  const input = { html: content.html, context: record.context ?? undefined };
  return appendChecked(deps, slug, input, ifLatest, { copyOf: version, files: files.get(version) ?? [] });
}
