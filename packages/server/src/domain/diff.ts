/**
 * The line diff of two versions of a drop (docs/api.md, "Version history: diff"; decision 0021). The exact diff is
 * jsdiff's (Myers, minimal in lines) under a time and an edit-length bound; past either bound, or past a line count,
 * the answer is a coarse diff that is still correct (applying it to `from` gives `to`): the common leading and
 * trailing lines kept, everything between them removed from `from` and added from `to`, in one hunk.
 */
import { createRequire } from 'node:module';
import type { StructuredPatch } from 'diff';
import { ApiError } from '../errors.js';
import { type DropDeps, getOwnedDrop, versionNotFound, versionNumberArg } from './drops.js';
import { diffFiles, type FilesDiff } from './files.js';

/** Lines of context around each change, as `diff -u`. */
export const CONTEXT_LINES = 3;

/** jsdiff, loaded on the first diff rather than at start-up (docs/architecture.md, "Process lifecycle"). */
let jsdiff: typeof import('diff') | undefined;
const library = () => {
  jsdiff ??= createRequire(import.meta.url)('diff') as typeof import('diff');
  return jsdiff;
};

export interface DiffBounds {
  /** Milliseconds the exact search may take (jsdiff's `timeout`). */
  readonly timeoutMs: number;
  /** Largest edit distance, in lines, the exact search looks for (jsdiff's `maxEditLength`). */
  readonly maxEditLength: number;
  /** Changed region, in lines of either side, above which the exact search is not tried at all. */
  readonly maxLines: number;
}

/** decision 0021: with these, two 2 MiB documents are compared in well under a second (bench/README.md). */
export const DIFF_BOUNDS: DiffBounds = { timeoutMs: 250, maxEditLength: 1000, maxLines: 100_000 };

export interface TextDiff {
  /** Unified diff with `--- <fromName>` / `+++ <toName>` headers; "" when the texts are equal. */
  readonly unified: string;
  readonly added: number;
  readonly removed: number;
  /** False when a bound was hit and the diff is the coarse one. */
  readonly exact: boolean;
}

export interface VersionDiff extends TextDiff {
  readonly from: number;
  readonly to: number;
  /** The files added, removed and changed (by content) from `from` to `to` (docs/api.md, "Many files in one drop"). */
  readonly files: FilesDiff;
}

/** Where two texts stop sharing whole lines: `start` in both, and where the common trailing lines begin in each. */
interface Split {
  readonly start: number;
  readonly endFrom: number;
  readonly endTo: number;
}

/** The common leading and trailing lines of two different texts (never overlapping), as character offsets. */
function commonLines(from: string, to: string): Split {
  const shorter = Math.min(from.length, to.length);
  let same = 0;
  while (same < shorter && from.charCodeAt(same) === to.charCodeAt(same)) same++;
  const start = same === 0 ? 0 : from.lastIndexOf('\n', same - 1) + 1;
  const room = shorter - start;
  let tail = 0;
  while (tail < room && from.charCodeAt(from.length - 1 - tail) === to.charCodeAt(to.length - 1 - tail)) tail++;
  let endFrom = from.length - tail;
  // The common tail counts from a line start in both texts: the first newline inside it, unless it already starts one.
  const atLineStart = (text: string, at: number) => at === start || text.charCodeAt(at - 1) === 10;
  if (tail > 0 && !(atLineStart(from, endFrom) && atLineStart(to, to.length - tail))) {
    const newline = from.indexOf('\n', endFrom);
    endFrom = newline < 0 ? from.length : newline + 1;
  }
  return { start, endFrom, endTo: to.length - (from.length - endFrom) };
}

/** The offset `count` line starts before `at` (not before 0). */
function linesBack(text: string, at: number, count: number): number {
  let position = at;
  for (let i = 0; i < count && position > 0; i++)
    position = position < 2 ? 0 : text.lastIndexOf('\n', position - 2) + 1;
  return position;
}

/** The offset after `count` more lines from `at` (not past the end). */
function linesForward(text: string, at: number, count: number): number {
  let position = at;
  for (let i = 0; i < count && position < text.length; i++) {
    const newline = text.indexOf('\n', position);
    position = newline < 0 ? text.length : newline + 1;
  }
  return position;
}

/** Newlines in text[start, end). */
function newlines(text: string, start: number, end: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', start); at >= 0 && at < end; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** Lines in a slice that starts at a line start: its newlines, plus an unterminated last line. */
const lineCount = (slice: string) => newlines(slice, 0, slice.length) + (slice === '' || slice.endsWith('\n') ? 0 : 1);

/** Each line of `slice` behind `mark`, with the "\ No newline at end of file" line after an unterminated last one. */
function marked(slice: string, mark: string): string {
  if (slice === '') return '';
  // split/join: for a million short lines, half the time and memory of replaceAll (bench/README.md).
  const body = mark + slice.split('\n').join(`\n${mark}`);
  return slice.endsWith('\n') ? body.slice(0, -mark.length) : `${body}\n\\ No newline at end of file\n`;
}

interface Region {
  readonly split: Split;
  /** Where the context before the change starts, the same in both texts; lines before it are not shown. */
  readonly contextStart: number;
  readonly contextEndFrom: number;
  readonly contextEndTo: number;
  /** Lines before `contextStart`. */
  readonly skipped: number;
}

function regionOf(from: string, to: string): Region {
  const split = commonLines(from, to);
  const contextStart = linesBack(from, split.start, CONTEXT_LINES);
  const contextEndFrom = linesForward(from, split.endFrom, CONTEXT_LINES);
  const contextEndTo = to.length - (from.length - contextEndFrom);
  return { split, contextStart, contextEndFrom, contextEndTo, skipped: newlines(from, 0, contextStart) };
}

/** One hunk: the context before, all of `from`'s changed lines removed, all of `to`'s added, the context after. */
function coarseDiff(fromName: string, toName: string, from: string, to: string, region: Region): TextDiff {
  const { split, contextStart, contextEndFrom, skipped } = region;
  const before = from.slice(contextStart, split.start);
  const removed = from.slice(split.start, split.endFrom);
  const added = to.slice(split.start, split.endTo);
  const after = from.slice(split.endFrom, contextEndFrom);
  const context = lineCount(before) + lineCount(after);
  const [removedLines, addedLines] = [lineCount(removed), lineCount(added)];
  // An empty range names the line before it (0 for an empty file), as diff -u does.
  const range = (lines: number) => `${lines === 0 ? skipped : skipped + 1},${lines}`;
  const header = `--- ${fromName}\n+++ ${toName}\n@@ -${range(context + removedLines)} +${range(context + addedLines)} @@\n`;
  const unified = header + marked(before, ' ') + marked(removed, '-') + marked(added, '+') + marked(after, ' ');
  return { unified, added: addedLines, removed: removedLines, exact: false };
}

/** jsdiff on the changed region and its context, numbered as lines of the whole texts; undefined past the bounds. */
function exactDiff(fromName: string, toName: string, from: string, to: string, region: Region, bounds: DiffBounds) {
  const { contextStart, contextEndFrom, contextEndTo, skipped } = region;
  const { structuredPatch, formatPatch, FILE_HEADERS_ONLY } = library();
  const patch: StructuredPatch | undefined = structuredPatch(
    fromName,
    toName,
    from.slice(contextStart, contextEndFrom),
    to.slice(contextStart, contextEndTo),
    undefined,
    undefined,
    { context: CONTEXT_LINES, timeout: bounds.timeoutMs, maxEditLength: bounds.maxEditLength },
  );
  if (patch === undefined) return undefined;
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    hunk.oldStart += skipped;
    hunk.newStart += skipped;
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  return { unified: formatPatch(patch, FILE_HEADERS_ONLY), added, removed, exact: true };
}

/**
 * The unified diff of two texts with `CONTEXT_LINES` of context, exact within `bounds`, coarse past them. Time: the
 * exact search stops after `bounds.timeoutMs`; everything else is linear in the texts' length.
 */
export function diffTexts(
  fromName: string,
  toName: string,
  from: string,
  to: string,
  bounds: DiffBounds = DIFF_BOUNDS,
): TextDiff {
  if (from === to) return { unified: '', added: 0, removed: 0, exact: true };
  const region = regionOf(from, to);
  const { split } = region;
  const changedLines = Math.max(newlines(from, split.start, split.endFrom), newlines(to, split.start, split.endTo));
  const exact = changedLines > bounds.maxLines ? undefined : exactDiff(fromName, toName, from, to, region, bounds);
  return exact ?? coarseDiff(fromName, toName, from, to, region);
}

export interface DiffQuery {
  readonly from?: unknown;
  readonly to?: unknown;
}

/**
 * `GET /api/drops/<slug>/diff`: the caller's drop (404 not_found / 403 forbidden), then `from` and `to` (400
 * invalid_arg), then both versions (404 version_not_found). `to` defaults to the latest version, `from` to the
 * highest version below `to`.
 */
export async function diffVersions(
  deps: DropDeps,
  accountId: string,
  slug: string,
  query: DiffQuery,
  bounds: DiffBounds = DIFF_BOUNDS,
): Promise<VersionDiff> {
  const drop = await getOwnedDrop(deps, accountId, slug);
  const fromArg = query.from === undefined ? undefined : versionNumberArg('from', query.from);
  const to = query.to === undefined ? drop.latestVersion : versionNumberArg('to', query.to);
  const from = fromArg ?? (await previousVersion(deps, slug, to));
  const [fromContent, toContent, fromFiles, toFiles] = await Promise.all([
    deps.store.getVersionContent(slug, from),
    deps.store.getVersionContent(slug, to),
    deps.store.listVersionFiles(slug, from),
    deps.store.listVersionFiles(slug, to),
  ]);
  if (fromContent === undefined) throw versionNotFound(slug, from);
  if (toContent === undefined) throw versionNotFound(slug, to);
  const diff = diffTexts(`${slug} v${from}`, `${slug} v${to}`, fromContent.html, toContent.html, bounds);
  const files = diffFiles(fromFiles.get(from) ?? [], toFiles.get(to) ?? []);
  return { from, to, ...diff, files };
}

/** The highest existing version below `to` (which must exist), else 404 version_not_found. */
async function previousVersion(deps: Pick<DropDeps, 'store'>, slug: string, to: number): Promise<number> {
  const versions = await deps.store.listVersions(slug);
  if (!versions.some((v) => v.version === to)) throw versionNotFound(slug, to);
  const previous = versions.filter((v) => v.version < to).reduce((best, v) => Math.max(best, v.version), 0);
  if (previous === 0) {
    throw new ApiError('version_not_found', {
      message: `Drop "${slug}" has no version before ${to} to compare it with; name one with from=<n>.`,
      details: { field: 'from' },
    });
  }
  return previous;
}
