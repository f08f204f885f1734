/**
 * The scanner's work (docs/decisions/0034-a-look-before-publishing.md): each text goes through secretlint's
 * recommended preset, the secret rules it lacks (secrets.ts) and the personal-data checks (personal-data.ts); matches
 * that overlap are reported once (the first to start wins, the preset's before ours), then each becomes a Finding with
 * its line and a masked excerpt. Loaded with secretlint on the first scanned write (scanner.ts).
 */
import type { Finding, ScanText } from '../domain/scan.js';
import { createLineIndex, type Match, maskExcerpt } from './mask.js';
import { findPersonalData } from './personal-data.js';
import { findWithSecretlint } from './secretlint.js';
import { findSecrets } from './secrets.js';

/** Matches in start order, each one that overlaps an earlier kept match dropped. */
function withoutOverlaps(matches: readonly Match[]): Match[] {
  const sorted = [...matches].sort((a, b) => a.start - b.start);
  const kept: Match[] = [];
  let reach = -1;
  for (const match of sorted) {
    if (match.start < reach) continue;
    kept.push(match);
    reach = match.end;
  }
  return kept;
}

/** What a list finding shows: the first value masked, and how many the text holds. */
function excerptOf(text: string, match: Match): string {
  const masked = maskExcerpt(text.slice(match.start, match.end));
  return match.count === undefined ? masked : `${masked} (${match.count} distinct)`;
}

/** The findings of one text, in order of position. */
export async function scanText({ where, text }: ScanText): Promise<Finding[]> {
  const matches = withoutOverlaps([
    ...(await findWithSecretlint(text)),
    ...findSecrets(text),
    ...findPersonalData(text),
  ]);
  if (matches.length === 0) return [];
  const lineOf = createLineIndex(text);
  return matches.map((match) => ({
    kind: match.kind,
    rule: match.rule,
    where,
    line: lineOf(match.start),
    excerpt: excerptOf(text, match),
  }));
}

/** The findings of every text, in input order. */
export async function scanTexts(texts: readonly ScanText[]): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const text of texts) findings.push(...(await scanText(text)));
  return findings;
}
