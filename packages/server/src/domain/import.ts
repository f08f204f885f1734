/**
 * Bringing an export back in (docs/api.md, "Export and import"; docs/decisions/0039-export-and-import.md). Two
 * passes over the archive: the first reads every entry once and checks it against `versions.json` (sizes, SHA-256,
 * UTF-8) and each drop against this service's limits, before anything is written, so a bad archive is refused whole
 * (400 invalid_archive); the second creates each drop that passed, with all its versions, in one transaction of its
 * own. Drops this service cannot take (a limit, the quota, a drop imported before) are skipped and named.
 */
import { createHash } from 'node:crypto';
import type { Limits } from '../config.js';
import { ApiError, isApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { MAX_COMMENT_CHARS, MAX_QUOTE_CHARS } from './comments.js';
import { newContentLabel } from './content-origin.js';
import { contentTypeOf, filePathProblem } from './files.js';
import { newCommentId, newSlug, type RandomInt } from './ids.js';
import { checkedNetwork } from './network.js';
import { type ArchivedDrop, importedSettings, type ManifestJson, type VersionJson } from './portability.js';
import { lookBeforePublishing, type ScanDeps, versionTexts } from './scan.js';
import type { ImportedVersion, ImportStore, NewFile } from './store.js';

/**
 * An archive whose shape was checked (portability/archive.ts: entry names, sizes, the JSON documents against their
 * schemas): the manifest, each drop's documents, and each entry's bytes, inflated when asked for.
 */
export interface ArchiveSource {
  readonly manifest: ManifestJson;
  /** The drop's JSON documents, or undefined when the archive holds none for this slug of the manifest. */
  drop(slug: string): Promise<ArchivedDrop | undefined>;
  /**
   * The bytes of `drops/<slug>/v/<version>/<name>`: refused unread (400 invalid_archive) when the entry declares more
   * than `maxBytes`, and while inflating when it yields other than it declared.
   */
  entry(slug: string, version: number, name: string, maxBytes: number): Promise<Buffer>;
}

export interface ImportDeps {
  readonly store: ImportStore;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly random?: RandomInt;
  /** The look before publishing, as for a write (domain/scan.ts); none wired: nothing is scanned. */
  readonly scan?: ScanDeps;
}

export interface ImportResult {
  readonly imported: Array<{ readonly from: string; readonly slug: string; readonly versions: number }>;
  readonly skipped: Array<{ readonly from: string; readonly reason: string; readonly slug?: string }>;
}

const invalid = (message: string, details: Record<string, unknown> = {}) =>
  new ApiError('invalid_archive', { message, details });

/** An encoded scrypt hash with parameters a passcode check can afford (domain/passcode.ts). */
const PASSCODE_HASH = /^scrypt\$(\d{1,7})\$(\d{1,2})\$(\d)\$[A-Za-z0-9+/]{1,64}={0,2}\$[A-Za-z0-9+/]{1,128}={0,2}$/;
const affordable = (hash: string) => {
  const [, n, r, p] = PASSCODE_HASH.exec(hash) ?? [];
  const N = Number(n);
  return n !== undefined && N >= 2 && N <= 131_072 && (N & (N - 1)) === 0 && Number(r) <= 16 && Number(p) <= 4;
};

const chars = (text: string) => [...text].length;
const METADATA_KEY = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/**
 * Why this service cannot take the drop (an error code of docs/api.md, as a write of it would be answered), or
 * undefined. Checked on the documents alone, before a byte of its versions is read.
 */
export function importProblem(archived: ArchivedDrop, limits: Limits, now: number): string | undefined {
  const { drop, versions, comments } = archived;
  const settings = drop.settings;
  try {
    importedSettings(settings);
  } catch (error) {
    if (isApiError(error)) return error.code;
    throw error;
  }
  if (settings.expires_at !== null && settings.expires_at <= now) return 'expired';
  if (chars(drop.title) > limits.maxTitleChars) return 'title_too_long';
  if (drop.title.trim() === '') return 'title_required';
  if (drop.description !== null && chars(drop.description) > limits.maxDescriptionChars) return 'description_too_long';
  const tags = Object.entries(drop.metadata);
  if (
    tags.length > limits.maxMetadataKeys ||
    tags.some(
      ([key, value]) =>
        !METADATA_KEY.test(key) ||
        key.length > limits.maxMetadataKeyChars ||
        chars(value) > limits.maxMetadataValueChars,
    )
  ) {
    return 'invalid_arg';
  }
  try {
    checkedNetwork(settings.network);
  } catch {
    return 'invalid_arg';
  }
  if (settings.passcode_hash !== null && !affordable(settings.passcode_hash)) return 'invalid_arg';
  if (versions.length === 0) return 'version_not_found';
  if (versions.length > limits.maxVersionsPerDrop) return 'version_limit_reached';
  for (const version of versions) {
    if (version.size_bytes > limits.maxHtmlBytes) return 'html_too_large';
    if (version.files.length > limits.maxFilesPerVersion) return 'too_many_files';
    if (version.files.some((file) => filePathProblem(file.path) !== undefined)) return 'invalid_file_path';
    const total = version.files.reduce((sum, file) => sum + file.size_bytes, version.size_bytes);
    if (total > limits.maxVersionBytes) return 'version_too_large';
  }
  const numbers = new Set(versions.map((version) => version.version));
  const others = comments.filter((comment) => comment.author.kind !== 'owner').length;
  if (others > limits.maxCommentsPerDrop) return 'comment_limit_reached';
  if (
    comments.some(
      (comment) =>
        chars(comment.body) > MAX_COMMENT_CHARS ||
        (comment.quote !== null && chars(comment.quote) > MAX_QUOTE_CHARS) ||
        !numbers.has(comment.version),
    )
  ) {
    return 'invalid_arg';
  }
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(bytes: Buffer, where: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalid(`${where} is not UTF-8 text.`, { entry: where });
  }
}

/** One version read from the archive and checked against its line in versions.json (sizes, SHA-256, UTF-8). */
async function readVersion(
  source: ArchiveSource,
  slug: string,
  version: VersionJson,
  limits: Limits,
): Promise<ImportedVersion> {
  const n = version.version;
  const where = (name: string) => `drops/${slug}/v/${n}/${name}`;
  const htmlBytes = await source.entry(slug, n, 'index.html', version.size_bytes);
  if (htmlBytes.length !== version.size_bytes) {
    throw invalid(`${where('index.html')} holds ${htmlBytes.length} bytes, versions.json says ${version.size_bytes}.`);
  }
  const html = text(htmlBytes, where('index.html'));
  let context: string | null = null;
  if (version.context !== null) {
    const bytes = await source.entry(slug, n, version.context, limits.maxContextBytes);
    if (bytes.length > limits.maxContextBytes) throw invalid(`${where(version.context)} is larger than a context.`);
    context = text(bytes, where(version.context));
  }
  const files: NewFile[] = [];
  for (const file of version.files) {
    const bytes = await source.entry(slug, n, file.path, file.size_bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (bytes.length !== file.size_bytes || sha256 !== file.sha256) {
      throw invalid(`${where(file.path)} is not the file versions.json describes (size or SHA-256).`);
    }
    // The Content-Type is this service's, from the extension, as for any file published here (domain/files.ts).
    files.push({ path: file.path, contentType: contentTypeOf(file.path), bytes });
  }
  return { version: n, html, sizeBytes: htmlBytes.length, context, files, createdAt: version.created_at };
}

/** A drop's versions in order, read and checked one at a time, each looked at before publishing. */
async function* versionsOf(
  deps: ImportDeps,
  source: ArchiveSource,
  slug: string,
  versions: readonly VersionJson[],
): AsyncGenerator<ImportedVersion> {
  for (const version of [...versions].sort((a, b) => a.version - b.version)) {
    const read = await readVersion(source, slug, version, deps.limits);
    const warnings = await lookBeforePublishing(
      deps.scan,
      versionTexts(read.html, read.context, read.files),
      undefined,
    );
    yield { ...read, warnings };
  }
}

/**
 * Imports an archive into the caller's account. Refuses it whole (400 invalid_archive) when an entry does not match
 * its description; otherwise creates, in the manifest's order, each drop that this service can take and that this
 * account has not imported from the same source, each in one transaction, and answers what it made and skipped.
 */
export async function importArchive(deps: ImportDeps, accountId: string, source: ArchiveSource): Promise<ImportResult> {
  const { manifest } = source;
  const now = deps.clock.now();
  const plan: Array<{ from: string; archived: ArchivedDrop | undefined; problem: string | undefined }> = [];
  const slugs = new Set<string>();
  // First pass: every document and every entry, before anything is written.
  for (const { slug } of manifest.drops) {
    if (slugs.has(slug)) throw invalid(`The manifest names the drop "${slug}" twice.`);
    slugs.add(slug);
    const archived = await source.drop(slug);
    if (archived === undefined) {
      plan.push({ from: slug, archived, problem: 'not_in_archive' });
      continue;
    }
    if (archived.drop.slug !== slug) throw invalid(`drops/${slug}/drop.json names another slug.`);
    const numbers = new Set(archived.versions.map((version) => version.version));
    if (numbers.size !== archived.versions.length) throw invalid(`drops/${slug}/versions.json lists a version twice.`);
    for (const version of archived.versions) {
      const paths = new Set(version.files.map((file) => file.path));
      if (paths.size !== version.files.length || (version.context !== null && paths.has(version.context))) {
        throw invalid(`drops/${slug}/versions.json names one entry of version ${version.version} twice.`);
      }
    }
    const problem = importProblem(archived, deps.limits, now);
    // A drop this service cannot take is skipped without reading its versions.
    if (problem === undefined) {
      for (const version of archived.versions) await readVersion(source, slug, version, deps.limits);
    }
    plan.push({ from: slug, archived, problem });
  }
  const result: ImportResult = { imported: [], skipped: [] };
  for (const { from, archived, problem } of plan) {
    if (archived === undefined || problem !== undefined) {
      result.skipped.push({ from, reason: problem ?? 'not_in_archive' });
      continue;
    }
    const origin = `${manifest.user_id}/${from}`;
    const existing = await deps.store.findImportedDrop(accountId, origin);
    if (existing !== undefined) {
      result.skipped.push({ from, reason: 'already_imported', slug: existing });
      continue;
    }
    const { drop, versions, comments } = archived;
    const slug = newSlug(deps.random);
    let made: Awaited<ReturnType<ImportStore['importDrop']>>;
    try {
      made = await deps.store.importDrop(
        {
          slug,
          accountId,
          source: origin,
          title: drop.title,
          description: drop.description,
          metadata: drop.metadata,
          ...importedSettings(drop.settings),
          contentLabel: newContentLabel(deps.random),
          createdAt: drop.created_at,
          updatedAt: drop.updated_at,
          versions: () => versionsOf(deps, source, from, versions),
          commentList: comments.map((comment) => ({
            id: newCommentId(deps.random),
            version: comment.version,
            body: comment.body,
            quote: comment.quote,
            authorName: comment.author.name,
            authorKind: comment.author.kind,
            createdAt: comment.created_at,
            resolvedAt: comment.resolved_at,
            resolvedInVersion: comment.resolved_in_version,
          })),
          now,
        },
        deps.limits.maxDropsPerAccount,
      );
    } catch (error) {
      // The look before publishing in block mode refused a version: the drop's transaction wrote nothing.
      if (error instanceof ApiError && error.code === 'sensitive_content') {
        result.skipped.push({ from, reason: 'sensitive_content' });
        continue;
      }
      throw error;
    }
    if (made === 'quota') result.skipped.push({ from, reason: 'quota_exceeded' });
    else if (made === 'already_imported') {
      result.skipped.push({
        from,
        reason: 'already_imported',
        slug: (await deps.store.findImportedDrop(accountId, origin)) ?? '',
      });
    } else result.imported.push({ from, slug: made.slug, versions: made.versionCount });
  }
  return result;
}
