/**
 * The files of a version (docs/api.md, "Many files in one drop"; docs/decisions/0033-many-files-in-one-drop.md): the
 * path rules, decoding what a client sent (text, or base64), the per-version limits, and the Content-Type each file
 * is served with, chosen from its extension by the `mime-types` table, loaded on the first file rather than at start.
 */
import { createRequire } from 'node:module';
import type { Limits } from '../config.js';
import { ApiError } from '../errors.js';
import { parseVersionNumber } from './ids.js';
import type { NewFile } from './store.js';
import type { VersionFile } from './types.js';

/** A file as a client sends it: its text, or its bytes in base64. */
export interface FileInput {
  readonly content: string;
  readonly encoding?: 'base64' | undefined;
}

/** `files` of a create or PUT: path to file. */
export type FilesInput = Readonly<Record<string, FileInput>>;

/** Bytes of a path, at most. */
export const MAX_FILE_PATH_BYTES = 255;

/** The HTML is the entry: a file cannot take its name at the top (`sub/index.html` is a file like any other). */
const ENTRY = 'index.html';

/** A path segment: letters, digits, `.`, `_`, `-` (not `.` or `..` alone, checked apart). */
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Why `path` is not a file path, or undefined when it is one. */
export function filePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'it is empty';
  if (Buffer.byteLength(path, 'utf8') > MAX_FILE_PATH_BYTES) return `it is longer than ${MAX_FILE_PATH_BYTES} bytes`;
  for (const segment of path.split('/')) {
    if (segment === '') return 'it has an empty segment (a leading, trailing or doubled /)';
    if (segment === '.' || segment === '..') return `it has a "${segment}" segment`;
    if (!SEGMENT.test(segment)) return 'a segment holds a character other than letters, digits, ".", "_" and "-"';
  }
  if (path === ENTRY) return '"index.html" at the top is the entry: send it as html';
  return undefined;
}

/** What `details.path` names: the path as sent, cut so that an answer stays small. */
const shownPath = (path: string) => path.slice(0, MAX_FILE_PATH_BYTES + 45);

/** 400 invalid_file_path naming the path, when it breaks the rules. */
export function checkFilePath(path: string): void {
  const problem = filePathProblem(path);
  if (problem === undefined) return;
  throw new ApiError('invalid_file_path', {
    message: `The file path ${JSON.stringify(shownPath(path))} is not valid: ${problem}.`,
    details: { path: shownPath(path) },
  });
}

/**
 * Strict base64 (RFC 4648 section 4, padding optional): the alphabet only, `=` only at the end. Node's decoder skips
 * what it does not know, which would store other bytes than the client meant; checked with linear scans, since a
 * file may be megabytes.
 */
function isBase64(text: string): boolean {
  if (/[^A-Za-z0-9+/=]/.test(text)) return false;
  const pad = text.indexOf('=');
  const body = pad === -1 ? text.length : pad;
  if (pad !== -1 && (text.length - pad > 2 || text.length % 4 !== 0 || /[^=]/.test(text.slice(pad)))) return false;
  return body % 4 !== 1;
}

function decoded(path: string, file: FileInput): Buffer {
  if (file.encoding !== 'base64') return Buffer.from(file.content, 'utf8');
  if (!isBase64(file.content)) {
    throw new ApiError('invalid_arg', {
      message: `files[${JSON.stringify(shownPath(path))}].content is not valid base64.`,
      details: { field: 'files', path: shownPath(path) },
    });
  }
  return Buffer.from(file.content, 'base64');
}

/** The Content-Type table, loaded on first use. */
let mimeTypes: typeof import('mime-types') | undefined;
const table = () => {
  mimeTypes ??= createRequire(import.meta.url)('mime-types') as typeof import('mime-types');
  return mimeTypes;
};

/** When the extension names no known type: bytes, which a browser neither runs nor renders (with nosniff). */
export const UNKNOWN_TYPE = 'application/octet-stream';

/**
 * The Content-Type a file is served with, from its extension (`chart.png` image/png, `app.js` text/javascript;
 * charset=utf-8); application/octet-stream for none (`LICENSE`, `.env`) or an unknown one.
 */
export function contentTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return UNKNOWN_TYPE;
  const mime = table();
  const type = mime.types[name.slice(dot + 1).toLowerCase()];
  return type === undefined ? UNKNOWN_TYPE : mime.contentType(type) || type;
}

/**
 * Checks and decodes a version's files, in this order: how many (400 too_many_files), each path (400
 * invalid_file_path), each content (base64: 400 invalid_arg naming the path), then the HTML's `htmlBytes` and the
 * files' bytes together (400 version_too_large). Returns them sorted by path.
 */
export function decodeFiles(input: FilesInput | undefined, htmlBytes: number, limits: Limits): NewFile[] {
  if (input === undefined) return [];
  const paths = Object.keys(input);
  if (paths.length > limits.maxFilesPerVersion) {
    throw new ApiError('too_many_files', {
      message: `A version takes at most ${limits.maxFilesPerVersion} files (got ${paths.length}).`,
      details: { max_files: limits.maxFilesPerVersion },
    });
  }
  paths.sort();
  for (const path of paths) checkFilePath(path);
  let total = htmlBytes;
  const files = paths.map((path): NewFile => {
    const bytes = decoded(path, input[path] as FileInput);
    total += bytes.length;
    return { path, contentType: contentTypeOf(path), bytes };
  });
  checkVersionBytes(total, limits);
  return files;
}

/** 400 version_too_large when a version's HTML and files together pass the limit. */
export function checkVersionBytes(total: number, limits: Limits): void {
  if (total <= limits.maxVersionBytes) return;
  throw new ApiError('version_too_large', {
    message: `The HTML and the files together exceed ${limits.maxVersionBytes} bytes (got ${total}).`,
    details: { max_bytes: limits.maxVersionBytes, size_bytes: total },
  });
}

/**
 * Content types whose bytes are compressed already (images, fonts, media, archives): stored and served as they are,
 * without spending a compression on them. Anything else is worth a try.
 */
const PACKED =
  /^(image\/(png|jpeg|gif|webp|avif|heic|heif|jxl)|font\/woff2?|video\/|audio\/|application\/(zip|gzip|x-gzip|zstd|x-7z-compressed|x-bzip2|x-xz|x-rar-compressed|vnd\.rar))\b/;

/** Whether a file of this Content-Type is worth compressing (for storage and for transfer). */
export const isCompressible = (contentType: string): boolean => !PACKED.test(contentType);

/** A version's bytes in all: its HTML plus its files (the sum the version limit applies to). */
export const totalBytes = (htmlBytes: number, files: readonly VersionFile[]): number =>
  files.reduce((sum, file) => sum + file.sizeBytes, htmlBytes);

/** What changed in the files between two versions, by path and content: each list sorted by path. */
export interface FilesDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export function diffFiles(from: readonly VersionFile[], to: readonly VersionFile[]): FilesDiff {
  const before = new Map(from.map((file) => [file.path, file.sha256]));
  const after = new Map(to.map((file) => [file.path, file.sha256]));
  const sorted = (paths: string[]) => paths.sort();
  return {
    added: sorted([...after.keys()].filter((path) => !before.has(path))),
    removed: sorted([...before.keys()].filter((path) => !after.has(path))),
    changed: sorted([...after].filter(([path, hash]) => before.has(path) && before.get(path) !== hash).map(([p]) => p)),
  };
}

/**
 * What a path under a drop's folder names (docs/api.md, "Many files in one drop"): on its own origin `/` (the latest
 * document, `?v=<n>` aside), `/v/<n>/` (version n's document), `/v/<n>/<path>` (its file) and `/<path>` (the latest
 * version's file); under `/p/<slug>/raw` only the `/v/<n>/…` forms. A locked drop's frame puts its grant first,
 * `/~<grant>/…`, so that the document's relative URLs carry it to every file. `/v/<n>` without its slash is sent to
 * `/v/<n>/`, where relative URLs resolve inside the version.
 */
export type FolderTarget =
  | { readonly kind: 'document' }
  | { readonly kind: 'folder'; readonly version: number }
  | { readonly kind: 'file'; readonly version: number | undefined; readonly path: string }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'none' };

/** A path and the grant before it (`/~<grant>/…`), or undefined for a grant segment without a path after it. */
function splitGrant(path: string): { grant: string | undefined; rest: string } | undefined {
  if (!path.startsWith('/~')) return { grant: undefined, rest: path };
  const end = path.indexOf('/', 2);
  if (end === -1) return undefined;
  return { grant: path.slice(2, end), rest: path.slice(end) };
}

/** A file path as a URL carries it, decoded and checked; undefined when it names no possible file. */
function filePathOf(encoded: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  return filePathProblem(path) === undefined ? path : undefined;
}

/**
 * Reads `path` (a URL's path under the drop's folder, starting with `/`, without its query). `latestFiles`: whether
 * `/<path>` names the latest version's file (the drop's own origin) or nothing (the raw path).
 */
export function folderTarget(path: string, latestFiles: boolean): { grant: string | undefined; target: FolderTarget } {
  const split = splitGrant(path);
  if (split === undefined) return { grant: undefined, target: { kind: 'none' } };
  const { grant, rest } = split;
  const prefix = grant === undefined ? '' : `/~${grant}`;
  const at = (target: FolderTarget) => ({ grant, target });
  if (rest === '/') return at(latestFiles ? { kind: 'document' } : { kind: 'none' });
  const folder = /^\/v\/([^/]+)(\/.*)?$/.exec(rest);
  const version = folder === null ? undefined : parseVersionNumber(folder[1]);
  if (folder !== null && version !== undefined) {
    const inside = folder[2];
    if (inside === undefined) return at({ kind: 'redirect', location: `${prefix}/v/${version}/` });
    if (inside === '/') return at({ kind: 'folder', version });
    const file = filePathOf(inside.slice(1));
    return at(file === undefined ? { kind: 'none' } : { kind: 'file', version, path: file });
  }
  const file = latestFiles ? filePathOf(rest.slice(1)) : undefined;
  return at(file === undefined ? { kind: 'none' } : { kind: 'file', version: undefined, path: file });
}
