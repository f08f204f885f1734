/**
 * The readable copy of a drop (docs/api.md, "Readable copy (Markdown)"; docs/decisions/0025-markdown-copy.md): who
 * may read which version as Markdown, and the Markdown around the document's own text: the title, description,
 * version and date, and the version's context under its own heading. Converting the document is serve/'s work; this
 * file only decides and composes.
 */
import { opensLockedDrop, type PublicViewDeps, type VisitorAccess } from './public-view.js';
import { type DropRecord, isExpired, type VersionRecord } from './types.js';

/** What `/p/<slug>.md` (or `/p/<slug>` asked for Markdown) answers, before the document is converted. */
export type ReadableCopy =
  | { readonly kind: 'not_found' }
  /** Past its expiry (docs/api.md, "Expiry"), whether or not the purge has deleted it yet. */
  | { readonly kind: 'expired' }
  /** Locked, and the request holds neither a capability nor the owner's token: not a byte of the drop. */
  | { readonly kind: 'locked' }
  | { readonly kind: 'version_not_found'; readonly latestVersion: number }
  | { readonly kind: 'readable'; readonly drop: DropRecord; readonly shown: VersionRecord };

/**
 * `requested`: a version number, undefined for the latest, or null for a `?v=` that names no possible version
 * (answered only past the lock, as on the viewer). A locked drop opens with a capability for its current passcode
 * or with its owner's bearer token, as its raw document does (docs/api.md 4.6).
 */
export async function findReadableCopy(
  deps: PublicViewDeps,
  slug: string,
  requested: number | null | undefined,
  access: VisitorAccess,
): Promise<ReadableCopy> {
  const drop = await deps.store.findDrop(slug);
  if (drop === undefined) return { kind: 'not_found' };
  if (isExpired(drop, deps.clock.now())) return { kind: 'expired' };
  if (drop.locked && !(await opensLockedDrop(deps, drop, access))) return { kind: 'locked' };
  if (requested === null) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const shown = await deps.store.getVersion(slug, requested ?? drop.latestVersion);
  if (shown === undefined) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  return { kind: 'readable', drop, shown };
}

/** Backslash-escapes what Markdown would read as markup in a line of plain text (a title, a description). */
export function escapeMarkdownText(text: string): string {
  return text
    .replace(/[\\`*_[\]<>#|~]/g, '\\$&')
    .replace(/^([ \t]*)([-+=])(?=\s|$)/gm, '$1\\$2')
    .replace(/^([ \t]*\d+)([.)])(?=\s|$)/gm, '$1\\$2');
}

const TEXT_ONLY_NOTES = {
  limits:
    'The text of this document without its structure: converting it to Markdown exceeded the time or memory allowed.',
  busy: 'The text of this document without its structure: the Markdown converter is busy; ask again shortly.',
} as const;

/** `2026-11-21 12:00 UTC`: the date as the viewer shows it, in UTC. */
function utcDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export interface ReadableCopyParts {
  readonly drop: Pick<DropRecord, 'slug' | 'title' | 'description' | 'latestVersion'>;
  readonly shown: Pick<VersionRecord, 'version' | 'createdAt' | 'context'>;
  /** The document's text: Markdown, or plain text when the conversion fell back. */
  readonly documentText: string;
  /**
   * Why `documentText` is plain text, if it is (the copy says so): the document outlived the converter's time or
   * memory (`limits`), or the converter could not take it now (`busy`).
   */
  readonly textOnly?: 'limits' | 'busy' | undefined;
  /** `{base_url}`, for the links to the viewer and the latest version. */
  readonly baseUrl: string;
}

/**
 * The readable copy: `# Title`, the description, a short list (version, whether it is the latest, date, the viewer's
 * URL), a rule, the document's text, and `## Context` with the version's context when it has one.
 */
export function composeReadableCopy({ drop, shown, documentText, textOnly, baseUrl }: ReadableCopyParts): string {
  const latest = shown.version === drop.latestVersion;
  const viewer = `${baseUrl}/p/${drop.slug}`;
  const lines = [`# ${escapeMarkdownText(drop.title.replace(/\s+/g, ' ').trim())}`, ''];
  const description = (drop.description ?? '').trim();
  if (description !== '') lines.push(escapeMarkdownText(description), '');
  lines.push(
    latest
      ? `- Version: ${shown.version} (the latest)`
      : `- Version: ${shown.version} of ${drop.latestVersion} (not the latest: ${viewer}.md)`,
    `- Published: ${utcDate(shown.createdAt)}`,
    `- Viewer: ${viewer}?v=${shown.version}`,
    '',
    '---',
    '',
  );
  if (textOnly !== undefined) {
    lines.push(`> ${TEXT_ONLY_NOTES[textOnly]}`, '');
  }
  lines.push(documentText.trim());
  const context = (shown.context ?? '').trim();
  if (context !== '') lines.push('', '---', '', '## Context', '', context);
  return `${lines.join('\n')}\n`;
}
