import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';
import { settings } from './0002-settings.js';
import { deviceRequests } from './0003-device-requests.js';
import { signingKeysOut } from './0004-signing-keys-out.js';
import { viewStats } from './0005-view-stats.js';
import { comments } from './0006-comments.js';
import { history } from './0007-history.js';
import { contentOrigins } from './0008-content-origins.js';
import { oauth } from './0009-oauth.js';
import { versionBodies } from './0010-version-bodies.js';
import { commentClock } from './0011-comment-clock.js';
import { oauthTokenLifetimes } from './0012-oauth-token-lifetimes.js';
import { versionFiles } from './0013-version-files.js';
import { versionWarnings } from './0014-version-warnings.js';
import { visibility } from './0015-visibility.js';
import { webhooks } from './0016-webhooks.js';
import { searchIndex } from './0017-search-index.js';
import { versionPreviews } from './0018-version-previews.js';
import { importedDrops } from './0019-imported-drops.js';
import { searchOwner } from './0020-search-owner.js';
import { searchLeaner } from './0021-search-leaner.js';

/** Ordered migrations. Names sort in application order; never rename or edit a released one. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-settings': settings,
  '0003-device-requests': deviceRequests,
  '0004-signing-keys-out': signingKeysOut,
  '0005-view-stats': viewStats,
  '0006-comments': comments,
  '0007-history': history,
  '0008-content-origins': contentOrigins,
  '0009-oauth': oauth,
  '0010-version-bodies': versionBodies,
  '0011-comment-clock': commentClock,
  '0012-oauth-token-lifetimes': oauthTokenLifetimes,
  '0013-version-files': versionFiles,
  '0014-version-warnings': versionWarnings,
  '0015-visibility': visibility,
  '0016-webhooks': webhooks,
  '0017-search-index': searchIndex,
  '0018-version-previews': versionPreviews,
  '0019-imported-drops': importedDrops,
  '0020-search-owner': searchOwner,
  '0021-search-leaner': searchLeaner,
};

/**
 * The order migrations apply in: their names compared by code unit (the names are ASCII and begin with their number).
 * Kysely's default compares with `localeCompare`, whose first call loads the collation data: 14 ms of every start.
 */
export const migrationOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(MIGRATIONS),
};
