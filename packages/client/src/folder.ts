/**
 * A folder as one drop (docs/api.md, "Many files in one drop"): `<dir>/index.html` is the document and every other
 * file under `<dir>` goes with it (dotfiles and dot-folders skipped), their paths checked against the service's rules
 * before anything is sent, with warnings for references in the HTML and CSS that will not resolve. Also the files of
 * an MCP call given as paths on disk (readFileMap).
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs/promises';
import path from 'node:path';
import { HtmlDropError } from './errors.js';
import { assertPublishable, checkHtml, type HtmlWarning, relativeReferences } from './html-checks.js';
import { readTextSource } from './source.js';
import type { DropFiles, FileInput } from './types.js';

/** The entry document of a folder, at its top. */
export const INDEX = 'index.html';

/** A file that goes with the document, as listed by `publish --dry-run`. */
export interface FolderEntry {
  /** Its path in the drop (`/`-separated, relative to the folder). */
  readonly path: string;
  readonly size_bytes: number;
  /** How it is sent: as text (UTF-8 without NUL bytes) or in base64. */
  readonly encoding: 'text' | 'base64';
}

/** A folder read for publishing. */
export interface Folder {
  /** The folder as given. */
  readonly dir: string;
  /** The text of `<dir>/index.html`. */
  readonly html: string;
  /** The other files, as the API takes them. */
  readonly files: DropFiles;
  /** The same files, sorted by path, with their sizes. */
  readonly entries: readonly FolderEntry[];
  /** What was left out: dotfiles and dot-folders (`.git/`), links to folders, anything that is not a file. */
  readonly skipped: readonly string[];
  /** index.html and the files, in bytes (the service's version limit applies to this sum). */
  readonly totalBytes: number;
  /** What may break: the document's own checks, and references that will not resolve among the files. */
  readonly warnings: readonly HtmlWarning[];
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * Why the service would refuse `file` as a path in a drop, or undefined (docs/api.md, "Many files in one drop"): 1 to
 * 255 bytes of `/`-separated segments of letters, digits, `.`, `_`, `-`; no empty, `.` or `..` segment; not
 * `index.html` at the top.
 */
export function filePathProblem(file: string): string | undefined {
  if (file === '' || Buffer.byteLength(file) > 255) return 'a path is 1 to 255 bytes';
  for (const segment of file.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return 'no empty, "." or ".." segment';
    if (!SEGMENT.test(segment)) return 'only letters, digits, ".", "_" and "-" in a name';
  }
  return file === INDEX ? 'index.html at the top is the document itself' : undefined;
}

/** A file's bytes as the API takes them: UTF-8 text as it is, anything else in base64. */
export function fileInput(bytes: Buffer): FileInput {
  return !bytes.includes(0) && isUtf8(bytes)
    ? { content: bytes.toString('utf8') }
    : { content: bytes.toString('base64'), encoding: 'base64' };
}

/** Refuses paths the service would refuse, naming them all at once. */
function checkPaths(paths: readonly string[], where: string): void {
  const bad = paths.filter((file) => filePathProblem(file) !== undefined);
  if (bad.length === 0) return;
  const first = bad[0] as string;
  throw new HtmlDropError(
    'invalid_file_path',
    `${bad.length} file name(s) in ${where} cannot be paths in a drop (${filePathProblem(first)}): ${bad.slice(0, 8).join(', ')}${bad.length > 8 ? ', ...' : ''}. Rename them, or move them out.`,
    { details: { path: first } },
  );
}

/** Every file under `dir` (relative paths, `/`-separated, sorted) and what was skipped. */
async function walk(dir: string): Promise<{ files: string[]; skipped: string[] }> {
  const files: string[] = [];
  const skipped: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    const entries = await fs.readdir(path.join(dir, relative), { withFileTypes: true });
    for (const entry of entries) {
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.name.startsWith('.')) {
        skipped.push(entry.isDirectory() ? `${rel}/` : rel);
        continue;
      }
      const kind = entry.isSymbolicLink() ? await fs.stat(path.join(dir, rel)).catch(() => undefined) : entry;
      if (kind?.isDirectory() === true && !entry.isSymbolicLink()) await visit(rel);
      else if (kind?.isFile() === true) files.push(rel);
      else skipped.push(rel);
    }
  };
  await visit('');
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { files: files.sort(byName), skipped: skipped.sort(byName) };
}

/**
 * Reads `dir` for publishing: its index.html (checked as a single document is: size, `not_html` unless `force`) and
 * every other file. `no_index` when index.html is missing; `invalid_file_path` naming the files the service would
 * refuse; `is_directory`/`file_not_found` for a `dir` that is not a folder.
 */
export async function readFolder(dir: string, options: { readonly force?: boolean } = {}): Promise<Folder> {
  const stat = await fs.stat(dir).catch(() => undefined);
  if (stat === undefined)
    throw new HtmlDropError('file_not_found', `${dir}: no such folder.`, { details: { path: dir } });
  if (!stat.isDirectory()) throw new HtmlDropError('usage', `${dir} is not a folder.`, { details: { path: dir } });
  const { files: found, skipped } = await walk(dir);
  if (!found.includes(INDEX)) {
    throw new HtmlDropError(
      'no_index',
      `${dir} has no index.html: a folder is published as its index.html (the document) with the files beside it. Add ${path.join(dir, INDEX)}, or publish one HTML file.`,
      { details: { path: dir } },
    );
  }
  const paths = found.filter((file) => file !== INDEX);
  checkPaths(paths, dir);
  const source = await readTextSource(path.join(dir, INDEX));
  assertPublishable(source.text, { force: options.force === true, name: source.name });
  const files: Record<string, FileInput> = {};
  const entries: FolderEntry[] = [];
  const texts = new Map<string, string>([[INDEX, source.text]]);
  let totalBytes = source.bytes;
  for (const file of paths) {
    const bytes = await fs.readFile(path.join(dir, file));
    const input = fileInput(bytes);
    files[file] = input;
    totalBytes += bytes.length;
    const text = 'encoding' in input ? undefined : input.content;
    entries.push({ path: file, size_bytes: bytes.length, encoding: text === undefined ? 'base64' : 'text' });
    if (text !== undefined && /\.(html?|css)$/i.test(file)) texts.set(file, text);
  }
  // The folder's files are uploaded with it: relative references among them are expected, not warned about.
  const own = checkHtml(source.text).filter((w) => w.code !== 'relative_reference');
  const warnings = [...own, ...referenceWarnings(texts, new Set(found))];
  return { dir, html: source.text, files, entries, skipped, totalBytes, warnings };
}

/** At most this many references are named in one warning. */
const MAX_NAMED = 8;

/** `ref (in file)`, for the first few of a list. */
function named(list: ReadonlyArray<{ ref: string; file: string }>): string {
  const shown = list.slice(0, MAX_NAMED).map(({ ref, file }) => `${ref} in ${file}`);
  return `${shown.join(', ')}${list.length > MAX_NAMED ? ` and ${list.length - MAX_NAMED} more` : ''}`;
}

/**
 * References in the folder's HTML and CSS that will not resolve once it is a drop: absolute paths (`/img/a.png`:
 * on the drop's own origin they reach the latest version's files only, and nothing on the raw path), paths that leave
 * the folder (`../a.png`), and paths naming no file of the folder.
 */
export function referenceWarnings(texts: ReadonlyMap<string, string>, paths: ReadonlySet<string>): HtmlWarning[] {
  const absolute: Array<{ ref: string; file: string }> = [];
  const outside: Array<{ ref: string; file: string }> = [];
  const missing: Array<{ ref: string; file: string }> = [];
  for (const [file, text] of texts) {
    for (const ref of relativeReferences(text)) {
      const bare = ref.split(/[?#]/, 1)[0] ?? '';
      if (bare === '') continue;
      if (bare.startsWith('/')) {
        absolute.push({ ref, file });
        continue;
      }
      let decoded = bare;
      try {
        decoded = decodeURIComponent(bare);
      } catch {
        // kept as written
      }
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), decoded));
      if (resolved === '..' || resolved.startsWith('../')) outside.push({ ref, file });
      else if (!paths.has(resolved)) missing.push({ ref, file });
    }
  }
  const warnings: HtmlWarning[] = [];
  if (absolute.length > 0) {
    warnings.push({
      code: 'absolute_reference',
      message: `${absolute.length} absolute reference(s) will not resolve in every version: ${named(absolute)}. On the drop's own origin they reach the latest version's files only (not an older version's, and nothing on the raw path); make them relative (img/a.png, not /img/a.png).`,
      references: absolute.map(({ ref }) => ref),
    });
  }
  if (outside.length > 0) {
    warnings.push({
      code: 'outside_reference',
      message: `${outside.length} reference(s) leave the folder and will not resolve (only the folder is uploaded): ${named(outside)}.`,
      references: outside.map(({ ref }) => ref),
    });
  }
  if (missing.length > 0) {
    warnings.push({
      code: 'missing_file',
      message: `${missing.length} reference(s) name no file of the folder and will answer 404: ${named(missing)}.`,
      references: missing.map(({ ref }) => ref),
    });
  }
  return warnings;
}

/**
 * Files given as paths on disk (the stdio MCP server's `files`): path in the drop to the path of a file on this
 * machine, relative to `cwd`. Each read and sent as text or base64; paths checked as the service checks them.
 */
export async function readFileMap(map: Readonly<Record<string, string>>, cwd: string): Promise<DropFiles> {
  checkPaths(Object.keys(map), 'files');
  const files: Record<string, FileInput> = {};
  for (const [file, onDisk] of Object.entries(map)) {
    const full = path.resolve(cwd, onDisk);
    const bytes = await fs.readFile(full).catch((error: NodeJS.ErrnoException) => {
      const code =
        error.code === 'ENOENT' ? 'file_not_found' : error.code === 'EISDIR' ? 'is_directory' : 'file_unreadable';
      throw new HtmlDropError(
        code,
        `${onDisk} (for ${file}): ${error.code === 'ENOENT' ? 'no such file' : 'cannot be read as a file'}.`,
        {
          details: { path: onDisk },
          cause: error,
        },
      );
    });
    files[file] = fileInput(bytes);
  }
  return files;
}
