/**
 * A look before publishing (docs/api.md, "A look before publishing"; docs/decisions/0034-a-look-before-publishing.md):
 * every write that makes a version hands its texts to a `Scanner` before anything is stored. What it finds comes back
 * on the answer and is kept with the version, masked; in block mode a finding refuses the write (422
 * sensitive_content). The scanner itself lives in scan/ and is wired by services.ts; this file is its port.
 */
import { ApiError } from '../errors.js';
import type { WarningStore } from './store.js';

/** What a finding is about: a credential, or data about people. */
export type FindingKind = 'secret' | 'personal_data';

/** Which text of a version a finding is in: the HTML, the context, or one of its files (`files/<path>`). */
export type ScanWhere = 'html' | 'context' | `files/${string}`;

/**
 * One finding, as answered and stored. `line` counts from 1 in the text named by `where`; `excerpt` is the match
 * masked (at most its first and last 4 characters shown, never more than a quarter of it on each side), so a
 * finding never carries the secret itself.
 */
export interface Finding {
  readonly kind: FindingKind;
  readonly rule: string;
  readonly where: ScanWhere;
  readonly line: number;
  readonly excerpt: string;
}

/** One text of a version to look at. */
export interface ScanText {
  readonly where: ScanWhere;
  readonly text: string;
}

/**
 * The scanner port. `scan` looks at every text and resolves to its findings in input order, then by line; it never
 * rejects for what a text contains, and never logs a match.
 */
export interface Scanner {
  scan(texts: readonly ScanText[]): Promise<Finding[]>;
}

/** `warn` (the default): findings come back with the write; `block`: a finding refuses it. */
export type ScanMode = 'warn' | 'block';

/**
 * What the look needs: the scanner, the operator's mode (HTMLDROP_SCAN), which a request cannot lower, and where
 * each version's findings are read back (they are written with the version, NewVersion.warnings).
 */
export interface ScanDeps {
  readonly scanner: Scanner;
  readonly mode: ScanMode;
  readonly store: WarningStore;
}

/** A drop as a write answers it: with what the look found in the version it made. */
export interface Scanned {
  readonly warnings: readonly Finding[];
}

/** At most this many findings are answered and kept per version; the count beyond it is not needed to act. */
export const MAX_FINDINGS = 100;

/**
 * Looks at a version's texts before anything is stored. Returns the findings (empty when clean, or when no scanner
 * is wired); throws 422 sensitive_content with `details.findings` when the request or the operator asks to block
 * and something was found.
 */
export async function lookBeforePublishing(
  deps: ScanDeps | undefined,
  texts: readonly ScanText[],
  requested: ScanMode | undefined,
): Promise<Finding[]> {
  if (deps === undefined) return [];
  const findings = (await deps.scanner.scan(texts)).slice(0, MAX_FINDINGS);
  const mode: ScanMode = deps.mode === 'block' ? 'block' : (requested ?? 'warn');
  if (mode === 'block' && findings.length > 0) {
    const first = findings[0] as Finding;
    throw new ApiError('sensitive_content', {
      message:
        `Nothing was stored: ${findings.length} finding(s) look like secrets or personal data, the first ` +
        `${first.rule} in ${first.where} line ${first.line}. Remove them (or send scan: "warn" when the operator allows).`,
      details: { findings },
    });
  }
  return findings;
}

/** A file of a version as the scanner sees it: its path, its Content-Type and its bytes. */
export interface ScanFile {
  readonly path: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
}

/** Content types whose bytes are text worth a look (scripts, styles, data, markup, SVG). */
const TEXT_TYPE =
  /^(text\/|image\/svg\+xml\b|application\/(json|javascript|ecmascript|xml|x-www-form-urlencoded|[\w.+-]*\+(json|xml))\b)/;

/**
 * A version's texts in the order they are scanned: the HTML, then the context when there is one, then each text file
 * (by path, as `files/<path>`); binary files are not looked at.
 */
export function versionTexts(
  html: string,
  context: string | null | undefined,
  files: readonly ScanFile[] = [],
): ScanText[] {
  const texts: ScanText[] = [{ where: 'html', text: html }];
  if (context) texts.push({ where: 'context', text: context });
  const decoder = new TextDecoder();
  for (const file of files) {
    if (!TEXT_TYPE.test(file.contentType)) continue;
    texts.push({ where: `files/${file.path}`, text: decoder.decode(file.bytes) });
  }
  return texts;
}
