/**
 * The readable copy of a drop (docs/api.md, "Readable copy (Markdown)"; docs/decisions/0025-markdown-copy.md): who
 * may read which version as Markdown, and the Markdown around the document's own text: the title, description,
 * version and date, and the version's context under its own heading. Converting the document is serve/'s work; this
 * file only decides and composes.
 */
import { escapeMarkdownText } from './markdown-text.js';
import { decideAccess, type PublicViewDeps, type VisitorAccess } from './public-view.js';
import type { AccessWho, RefusalReason } from './store.js';
import { type DropRecord, isExpired, type VersionRecord } from './types.js';

/** What `/p/<slug>.md` (or `/p/<slug>` asked for Markdown) answers, before the document is converted. */
export type ReadableCopy =
  | { readonly kind: 'not_found' }
  /** Past its expiry (docs/api.md, "Expiry"), whether or not the purge has deleted it yet. */
  | { readonly kind: 'expired' }
  /** Locked, and the request holds neither a capability nor the owner's token: not a byte of the drop. */
  | { readonly kind: 'locked' }
  /** Not for this visitor (docs/api.md, "Who can see a drop"): refused, nothing of the drop. */
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly who: AccessWho }
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
  const decision = await decideAccess(deps, drop, access, requested ?? null);
  if (decision.kind === 'refused') return decision;
  if (decision.kind === 'locked') return { kind: 'locked' };
  if (requested === null) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const shown = await deps.store.getVersion(slug, requested ?? drop.latestVersion);
  if (shown === undefined) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  return { kind: 'readable', drop, shown };
}

/**
 * Names the content of the version a readable copy shows, for the cache of finished copies
 * (serve/markdown-copy.ts): the drop's slug and creation time, the version's number, creation time and size. A
 * version never changes (its document and context are fixed when it is published) and slugs are random, so equal
 * names mean equal copies; the creation times tell apart a drop deleted and created again under the same slug.
 * Known from the metadata alone: a kept copy is answered without reading the document.
 */
export function readableVersionKey(
  drop: Pick<DropRecord, 'slug' | 'createdAt'>,
  shown: Pick<VersionRecord, 'version' | 'createdAt' | 'sizeBytes'>,
): string {
  return `${drop.slug} ${drop.createdAt} ${shown.version} ${shown.createdAt} ${shown.sizeBytes}`;
}

/**
 * The stored HTML of the version a readable copy shows, as published (the converter drops the head the raw answer
 * adds, so the raw cache and its injection are not needed); undefined when it was deleted meanwhile.
 */
export async function readableDocument(deps: PublicViewDeps, slug: string, version: number) {
  return (await deps.store.getVersionContent(slug, version))?.html;
}

const TEXT_ONLY_NOTES = {
  limits:
    'The text of this document without its structure: converting it to Markdown exceeded the time or memory allowed.',
  unreadable: 'The text of this document could not be extracted within the time or memory allowed.',
} as const;

/** `2026-11-21 12:00 UTC`: the date as the viewer shows it, in UTC. */
function utcDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export interface ReadableCopyParts {
  readonly drop: Pick<DropRecord, 'slug' | 'title' | 'description' | 'latestVersion'>;
  readonly shown: Pick<VersionRecord, 'version' | 'createdAt'>;
  /**
   * Why the document is not Markdown, if it is not (the copy says so): it is its plain text because the conversion
   * outlived the converter's time or memory or failed (`limits`), or absent because even that could not be had
   * (`unreadable`).
   */
  readonly textOnly?: keyof typeof TEXT_ONLY_NOTES | undefined;
  /** `{base_url}`, for the links to the viewer and the latest version. */
  readonly baseUrl: string;
}

/** What comes between the document and the version's context, when it has one. */
export const CONTEXT_HEADING = '\n\n---\n\n## Context\n\n';

/**
 * The copy up to the document: `# Title`, the description, a short list (version, whether it is the latest, date,
 * the viewer's URL), a rule, and the note of a fallback. The title and description are escaped as text.
 */
export function readableCopyHead({ drop, shown, textOnly, baseUrl }: ReadableCopyParts): string {
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
  if (textOnly !== undefined) lines.push(`> ${TEXT_ONLY_NOTES[textOnly]}`, '');
  return `${lines.join('\n')}\n`;
}

/**
 * The whole readable copy: the head, the document's text, and `## Context` with the version's context when it has
 * one. `documentText` and `context` are Markdown the converter has neutralised (serve/markdown-convert.ts); the
 * service writes the same pieces as bytes (http/routes/public.ts).
 */
export function composeReadableCopy(parts: ReadableCopyParts & { documentText: string; context: string }): string {
  const context = parts.context.trim();
  return `${readableCopyHead(parts)}${parts.documentText.trim()}${context === '' ? '' : `${CONTEXT_HEADING}${context}`}\n`;
}
