/** Human formatting for the command line: times, tags, aligned tables, sizes, a drop's details. */
import { describeExpiry } from '../expires.js';
import { describeNetwork } from '../network.js';
import type { Drop, Metadata, ScanWarning } from '../types.js';
import { describeMatch } from '../upsert.js';

const KIND_WORDS = { secret: 'secret', personal_data: 'personal data' } as const;

/**
 * The findings of the look before publishing (docs/api.md, "A look before publishing"), one line each:
 * `html line 12: secret (htmldrop/aws-access-key-id): AKIA************W5FG`. Anything not shaped like a finding is skipped.
 */
export function findingLines(findings: unknown): string[] {
  if (!Array.isArray(findings)) return [];
  return findings
    .filter((f): f is ScanWarning => typeof f === 'object' && f !== null && typeof (f as ScanWarning).rule === 'string')
    .map((f) => `${f.where} line ${f.line}: ${KIND_WORDS[f.kind] ?? f.kind} (${f.rule}): ${f.excerpt}`);
}

/** A timestamp (ms) as `YYYY-MM-DD HH:MMZ`; null is "never". */
export function when(ms: number | null): string {
  if (ms === null) return 'never';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

/** Tags as `k=v` pairs sorted by key, or "-" when there are none. */
export function tags(metadata: Metadata): string {
  const sorted = Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const text = describeMatch(sorted);
  return text === '' ? '-' : text;
}

/** Rows as columns padded to their widest cell (the last column is not padded). */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** A drop's fields, one `Name   value` line each. */
export function dropDetails(drop: Drop): string {
  const rows: [string, string][] = [
    ['Title', drop.title],
    ['URL', drop.url],
    ['Raw', drop.raw_url],
  ];
  // docs/api.md, "Each drop on its own origin": only when the service has content origins.
  if (drop.content_url !== null && drop.content_url !== undefined) rows.push(['Own origin', drop.content_url]);
  rows.push(
    ['Slug', drop.slug],
    ['Version', String(drop.latest_version)],
    ['Views', String(drop.view_count)],
    ['Passcode', drop.locked ? 'yes (locked)' : 'no'],
    ['Comments', drop.comments],
    ['Tags', tags(drop.metadata)],
    ['Created', when(drop.created_at)],
    ['Updated', when(drop.updated_at)],
    ['Expires', describeExpiry(drop.expires_at ?? null)],
    ['Network', describeNetwork(drop.network ?? 'open')],
  );
  if (drop.description !== '') rows.push(['Description', drop.description]);
  return rows.map(([k, v]) => `${k.padEnd(12)}${v}`).join('\n');
}

/** A size in B, KiB or MiB. */
export function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1_048_576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1_048_576).toFixed(2)} MiB`;
}
