/**
 * What an export holds, entry by entry, in a fixed order (docs/api.md, "Export and import"): the manifest, then per
 * drop (oldest first) its `drop.json`, `versions.json`, each version's document, context and files (versions in
 * order, files by path), `comments.json` and `stats.json`. Entries are produced one at a time and each reads its
 * bytes only when the zip writer asks for them, so an export holds a version or two in memory whatever the account's
 * size (docs/decisions/0039-export-and-import.md).
 */
import type { Limits } from '../config.js';
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import { isCompressible } from './files.js';
import {
  ARCHIVE_FORMAT,
  type CommentJson,
  contextEntryName,
  type DropJson,
  dropEntry,
  FORMAT_VERSION,
  MANIFEST_ENTRY,
  type ManifestJson,
  settingsOfDrop,
  type VersionJson,
  versionEntry,
} from './portability.js';
import { statsAnswer } from './stats.js';
import type { CommentStore, DropStore, ViewStore } from './store.js';
import type { CommentRecord, DropRecord } from './types.js';

export interface ExportDeps {
  readonly store: Pick<
    DropStore,
    | 'listDrops'
    | 'findDrop'
    | 'findPasscode'
    | 'listVersions'
    | 'getVersion'
    | 'getVersionContent'
    | 'listVersionFiles'
    | 'getVersionFile'
  > &
    Pick<CommentStore, 'listComments'> &
    Pick<ViewStore, 'getDropStats'>;
  readonly clock: Clock;
  readonly limits: Limits;
}

/** One entry of the archive: its name, its time, and its bytes, read when the writer reaches it. */
export interface ArchiveEntry {
  readonly path: string;
  /** Unix ms: the time of what it holds (a version's creation), so that the same content gives the same zip. */
  readonly mtime: number;
  /** Whether deflating it is worth it (false for images, fonts and other packed files). */
  readonly compress: boolean;
  read(): Promise<Buffer>;
}

/** Drops read per page of the listing. */
const DROPS_PER_PAGE = 100;
/** Comments read per query. */
const COMMENTS_PER_PAGE = 500;

const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

/** The account's live drops, oldest first (slug breaking ties), or the named ones (each the caller's: else 404/403). */
async function dropsToExport(deps: ExportDeps, accountId: string, slugs: readonly string[]): Promise<DropRecord[]> {
  const found: DropRecord[] = [];
  if (slugs.length > 0) {
    for (const slug of new Set(slugs)) found.push(await getOwnedDrop(deps, accountId, slug));
  } else {
    const query = { pageSize: DROPS_PER_PAGE, sortBy: 'created_at', sortOrder: 'asc', metadata: {} } as const;
    const aliveAt = deps.clock.now();
    for (let page = 1; ; page++) {
      const { items } = await deps.store.listDrops(accountId, { ...query, page, aliveAt });
      found.push(...items);
      if (items.length < DROPS_PER_PAGE) break;
    }
  }
  return found.sort((a, b) => a.createdAt - b.createdAt || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

const commentJson = (comment: CommentRecord): CommentJson => ({
  id: comment.id,
  version: comment.version,
  body: comment.body,
  quote: comment.quote,
  author: comment.author,
  created_at: comment.createdAt,
  resolved_at: comment.resolvedAt,
  resolved_in_version: comment.resolvedInVersion,
});

/** A drop's comments, oldest first, page by page (a time shared by two comments does not lose one). */
async function commentsOf(deps: ExportDeps, slug: string): Promise<CommentJson[]> {
  const all: CommentJson[] = [];
  const seen = new Set<string>();
  let since = -1;
  for (;;) {
    const page = await deps.store.listComments({ slug }, since, COMMENTS_PER_PAGE);
    const fresh = page.filter((comment) => !seen.has(comment.id));
    for (const comment of fresh) {
      seen.add(comment.id);
      all.push(commentJson(comment));
    }
    const last = page.at(-1);
    if (page.length < COMMENTS_PER_PAGE || last === undefined || fresh.length === 0) return all;
    since = last.createdAt - 1;
  }
}

/** The entries of one drop, in order; each version's rows are read when its turn comes. */
async function* dropEntries(deps: ExportDeps, drop: DropRecord): AsyncGenerator<ArchiveEntry> {
  const { slug } = drop;
  const { store } = deps;
  const passcode = await store.findPasscode(slug);
  const dropJson: DropJson = {
    slug,
    title: drop.title,
    description: drop.description,
    metadata: drop.metadata,
    created_at: drop.createdAt,
    updated_at: drop.updatedAt,
    latest_version: drop.latestVersion,
    settings: settingsOfDrop(drop, passcode?.hash ?? null),
  };
  yield { path: dropEntry(slug, 'drop.json'), mtime: drop.updatedAt, compress: true, read: async () => json(dropJson) };
  const infos = (await store.listVersions(slug)).reverse();
  const versions: VersionJson[] = [];
  for (const info of infos) {
    const files = (await store.listVersionFiles(slug, info.version)).get(info.version) ?? [];
    versions.push({
      version: info.version,
      created_at: info.createdAt,
      size_bytes: info.sizeBytes,
      context: info.hasContext ? contextEntryName(files.map((file) => file.path)) : null,
      files: files.map((file) => ({
        path: file.path,
        size_bytes: file.sizeBytes,
        content_type: file.contentType,
        sha256: file.sha256,
      })),
    });
  }
  yield {
    path: dropEntry(slug, 'versions.json'),
    mtime: drop.updatedAt,
    compress: true,
    read: async () => json(versions),
  };
  for (const version of versions) {
    const n = version.version;
    yield {
      path: versionEntry(slug, n, 'index.html'),
      mtime: version.created_at,
      compress: true,
      read: async () => Buffer.from((await store.getVersionContent(slug, n))?.html ?? '', 'utf8'),
    };
    if (version.context !== null) {
      yield {
        path: versionEntry(slug, n, version.context),
        mtime: version.created_at,
        compress: true,
        read: async () => Buffer.from((await store.getVersion(slug, n))?.context ?? '', 'utf8'),
      };
    }
    for (const file of version.files) {
      yield {
        path: versionEntry(slug, n, file.path),
        mtime: version.created_at,
        compress: isCompressible(file.content_type),
        read: async () => (await store.getVersionFile(slug, n, file.path))?.bytes ?? Buffer.alloc(0),
      };
    }
  }
  yield {
    path: dropEntry(slug, 'comments.json'),
    mtime: drop.updatedAt,
    compress: true,
    read: async () => json(await commentsOf(deps, slug)),
  };
  yield {
    path: dropEntry(slug, 'stats.json'),
    mtime: drop.updatedAt,
    compress: true,
    read: async () => {
      const stats = await store.getDropStats(slug);
      return json(stats === undefined ? null : statsAnswer(stats));
    },
  };
}

/**
 * The entries of the caller's export: every live drop of the account, or the drops named by `slugs` (each the
 * caller's, checked before the first entry: 404 not_found or 403 forbidden). The manifest comes first; drops are
 * listed once, before it (their records only, never a document).
 */
export async function exportEntries(
  deps: ExportDeps,
  accountId: string,
  slugs: readonly string[] = [],
): Promise<AsyncIterable<ArchiveEntry>> {
  const drops = await dropsToExport(deps, accountId, slugs);
  const exportedAt = deps.clock.now();
  const manifest: ManifestJson = {
    format: ARCHIVE_FORMAT,
    format_version: FORMAT_VERSION,
    exported_at: exportedAt,
    user_id: accountId,
    drops: drops.map((drop) => ({ slug: drop.slug, title: drop.title, latest_version: drop.latestVersion })),
  };
  return (async function* entries() {
    yield { path: MANIFEST_ENTRY, mtime: exportedAt, compress: true, read: async () => json(manifest) };
    for (const drop of drops) {
      // A drop deleted since the listing is left out of the archive (the manifest names it; an import skips it).
      if ((await deps.store.findDrop(drop.slug)) === undefined) continue;
      yield* dropEntries(deps, drop);
    }
  })();
}
