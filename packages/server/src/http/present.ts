/** Domain values -> API JSON (spec section 2; docs/api.md 2.1: every Drop carries every field). */
import type { Config } from '../config.js';
import { contentOrigins } from '../domain/content-origin.js';
import { totalBytes } from '../domain/files.js';
import type { Scanned } from '../domain/scan.js';
import { statsAnswer } from '../domain/stats.js';
import type { AccessEntry, RecipientLink } from '../domain/store.js';
import type { FoundDrop, TokenInfo, VersionFile, VersionInfo, VersionRecord } from '../domain/types.js';

/** Where a drop is reached: the service's base URL, and its own origin when one is configured. */
export interface DropLinks {
  readonly baseUrl: string;
  /** `<origin>/` of the drop's own origin, or null (docs/api.md, "Each drop on its own origin"). */
  contentUrlOf(label: string | null): string | null;
}

export function dropLinks(config: Pick<Config, 'baseUrl' | 'contentOrigin'>): DropLinks {
  const origins = config.contentOrigin === undefined ? undefined : contentOrigins(config.contentOrigin);
  return {
    baseUrl: config.baseUrl,
    contentUrlOf: (label) => (origins === undefined || label === null ? null : `${origins.originOf(label)}/`),
  };
}

/** A drop as the API answers it; a write's answer carries what the look before publishing found (non-empty only). */
export function presentDrop(drop: FoundDrop & Partial<Scanned>, { baseUrl, contentUrlOf }: DropLinks) {
  return {
    slug: drop.slug,
    title: drop.title,
    description: drop.description ?? '',
    url: `${baseUrl}/p/${drop.slug}`,
    raw_url: `${baseUrl}/p/${drop.slug}/raw`,
    locked: drop.locked,
    latest_version: drop.latestVersion,
    view_count: drop.viewCount,
    comments: drop.comments,
    metadata: drop.metadata,
    created_at: drop.createdAt,
    updated_at: drop.updatedAt,
    expires_at: drop.expiresAt,
    network: drop.network,
    visibility: drop.visibility,
    allow: drop.allow,
    content_url: contentUrlOf(drop.contentLabel),
    ...(drop.warnings === undefined || drop.warnings.length === 0 ? {} : { warnings: drop.warnings }),
    ...(drop.match === undefined ? {} : { match: { snippet: drop.match.snippet, fields: [...drop.match.fields] } }),
  };
}

/** A recipient link as its owner lists it (docs/api.md, "Who can see a drop"): never its secret. */
export function presentLink(link: RecipientLink) {
  return {
    id: link.id,
    label: link.label,
    created_at: link.createdAt,
    expires_at: link.expiresAt,
    revoked_at: link.revokedAt,
    views: link.views,
    last_viewed_at: link.lastViewedAt,
  };
}

/** An access log entry (docs/api.md, "Who can see a drop"). */
export function presentAccess(entry: AccessEntry) {
  return { at: entry.at, outcome: entry.outcome, reason: entry.reason, who: entry.who, version: entry.version };
}

/** A version's files and its total (docs/api.md, "Many files in one drop"). */
function presentFiles(sizeBytes: number, files: readonly VersionFile[]) {
  return {
    files: files.map((file) => ({
      path: file.path,
      size_bytes: file.sizeBytes,
      content_type: file.contentType,
      sha256: file.sha256,
    })),
    total_bytes: totalBytes(sizeBytes, files),
  };
}

export function presentVersionItem(version: VersionInfo, latest: number, files: readonly VersionFile[] = []) {
  return {
    version: version.version,
    size_bytes: version.sizeBytes,
    has_context: version.hasContext,
    created_at: version.createdAt,
    is_latest: version.version === latest,
    ...presentFiles(version.sizeBytes, files),
  };
}

export function presentVersion(version: VersionRecord, latest: number, files: readonly VersionFile[] = []) {
  return {
    slug: version.slug,
    version: version.version,
    size_bytes: version.sizeBytes,
    context: version.context,
    created_at: version.createdAt,
    is_latest: version.version === latest,
    ...presentFiles(version.sizeBytes, files),
  };
}

/** Read receipts (docs/api.md, "Read receipts"); a version's first render is not part of the answer. */
export const presentStats = statsAnswer;

export function presentToken(token: TokenInfo) {
  return {
    id: token.id,
    label: token.label,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    expires_at: token.expiresAt,
    oauth_client: token.oauthClient,
    renewable_until: token.renewableUntil,
  };
}
