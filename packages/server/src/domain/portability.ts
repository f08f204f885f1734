/**
 * The export format (docs/api.md, "Export and import"; docs/decisions/0039-export-and-import.md): the JSON documents
 * of an archive, the entry names, and the one mapping between a drop and the `settings` of its `drop.json`, both ways.
 * The zip itself is written and read in portability/; the rules of an export and an import are in export.ts and
 * import.ts beside this file.
 */
import type { NetworkPolicy } from './network.js';
import type { CommentAuthorKind, CommentSetting, DropRecord, Visibility } from './types.js';
import { checkedAllow, checkedVisibility } from './visibility.js';

export const ARCHIVE_FORMAT = 'htmldrop-export';
export const FORMAT_VERSION = 1;

/** `manifest.json`: what the archive holds (docs/schemas/manifest.schema.json). */
export interface ManifestJson {
  readonly format: typeof ARCHIVE_FORMAT;
  readonly format_version: number;
  /** Unix ms. */
  readonly exported_at: number;
  /** The exporting account's id on the exporting instance: with a drop's slug, the drop's id in the archive. */
  readonly user_id: string;
  readonly drops: ReadonlyArray<{ readonly slug: string; readonly title: string; readonly latest_version: number }>;
}

/** `settings` of `drop.json`: how the drop is served, its passcode's hash included, so a locked drop stays locked. */
export interface DropSettingsJson {
  readonly comments: CommentSetting;
  readonly network: NetworkPolicy;
  readonly visibility: Visibility;
  readonly allow: readonly string[];
  /** Unix ms; null: never. */
  readonly expires_at: number | null;
  /** The stored scrypt hash (domain/passcode.ts); null: open. */
  readonly passcode_hash: string | null;
}

/** `drops/<slug>/drop.json` (docs/schemas/drop.schema.json). */
export interface DropJson {
  readonly slug: string;
  readonly title: string;
  readonly description: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly created_at: number;
  readonly updated_at: number;
  readonly latest_version: number;
  readonly settings: DropSettingsJson;
}

/** A file of a version in `versions.json`; its bytes are at `drops/<slug>/v/<n>/<path>`. */
export interface VersionFileJson {
  readonly path: string;
  readonly size_bytes: number;
  readonly content_type: string;
  readonly sha256: string;
}

/** One item of `drops/<slug>/versions.json`, oldest first. */
export interface VersionJson {
  readonly version: number;
  readonly created_at: number;
  /** Bytes of the HTML (UTF-8), at `v/<n>/index.html`. */
  readonly size_bytes: number;
  /** The entry name of the context under `v/<n>/` (`context.md` unless a file has that name), or null: none. */
  readonly context: string | null;
  readonly files: readonly VersionFileJson[];
}

/** One item of `drops/<slug>/comments.json`, oldest first. */
export interface CommentJson {
  readonly id: string;
  readonly version: number;
  readonly body: string;
  readonly quote: string | null;
  readonly author: { readonly name: string; readonly kind: CommentAuthorKind };
  readonly created_at: number;
  readonly resolved_at: number | null;
  readonly resolved_in_version: number | null;
}

/** A drop's JSON documents as read from an archive. */
export interface ArchivedDrop {
  readonly drop: DropJson;
  readonly versions: readonly VersionJson[];
  readonly comments: readonly CommentJson[];
}

/** Entry names (docs/api.md, "Export and import"). */
export const MANIFEST_ENTRY = 'manifest.json';
export const dropEntry = (slug: string, name: 'drop.json' | 'versions.json' | 'comments.json' | 'stats.json') =>
  `drops/${slug}/${name}`;
export const versionEntry = (slug: string, version: number, name: string) => `drops/${slug}/v/${version}/${name}`;

/** The context's entry name in a version's folder: `context.md`, or the first free `context-<i>.md` beside its files. */
export function contextEntryName(filePaths: readonly string[]): string {
  const taken = new Set(filePaths);
  if (!taken.has('context.md')) return 'context.md';
  for (let i = 1; ; i++) if (!taken.has(`context-${i}.md`)) return `context-${i}.md`;
}

/** The one mapping of a drop to its exported settings (docs/api.md, "Export and import"). */
export function settingsOfDrop(drop: DropRecord, passcodeHash: string | null): DropSettingsJson {
  return {
    comments: drop.comments,
    network: drop.network,
    visibility: drop.visibility,
    allow: drop.allow,
    expires_at: drop.expiresAt,
    passcode_hash: passcodeHash,
  };
}

/** What an imported drop keeps of its settings: the fields of a new drop they become. */
export interface ImportedSettings {
  readonly comments: CommentSetting;
  readonly network: NetworkPolicy;
  readonly expiresAt: number | null;
  readonly passcodeHash: string | null;
  readonly visibility: Visibility;
  readonly allow: readonly string[];
}

/**
 * The one function that applies exported settings to a drop being imported: who may see it is checked as a write's
 * `visibility` and `allow` are (400 invalid_arg becomes the drop's skip reason, importProblem in import.ts), so an
 * imported drop is never more open than it was.
 */
export function importedSettings(settings: DropSettingsJson): ImportedSettings {
  return {
    visibility: checkedVisibility(settings.visibility) ?? 'public',
    allow: checkedAllow(settings.allow) ?? [],
    comments: settings.comments,
    network: settings.network,
    expiresAt: settings.expires_at,
    passcodeHash: settings.passcode_hash,
  };
}
