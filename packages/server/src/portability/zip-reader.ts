/**
 * Reading an uploaded zip from its temporary file with yauzl (docs/decisions/0039-export-and-import.md), loaded on
 * the first import. The central directory is read and checked before any entry is inflated: names (yauzl refuses
 * absolute paths, `..` segments and backslashes; NUL and empty names are refused here), no encryption, stored or
 * deflated only, no name twice, how many entries, the declared sizes against the bound of all of them, and the ratio
 * of a large entry's declared size to its compressed size. While an entry inflates, yauzl checks that it yields
 * exactly the size its header declared, so an entry that lies about its size stops at the declared size.
 */
import type { Entry, ZipFile } from 'yauzl';
import { ApiError } from '../errors.js';

type Yauzl = typeof import('yauzl');
let yauzl: Promise<Yauzl> | undefined;
const loadYauzl = (): Promise<Yauzl> => {
  yauzl ??= import('yauzl').then((module) => ((module as { default?: Yauzl }).default ?? module) as Yauzl);
  return yauzl;
};

export interface ZipBounds {
  readonly maxEntries: number;
  /** What all entries together may declare, inflated. */
  readonly maxTotalBytes: number;
}

/** Entries that declare at least this many bytes may be at most MAX_RATIO times their compressed size. */
const RATIO_FROM_BYTES = 1_048_576;
/** HTML and text deflate 3 to 20 times; a megabyte and more at a few hundred times is a bomb, not a drop. */
export const MAX_RATIO = 200;

export interface OpenedZip {
  /** Every file entry's name (directories left out). */
  readonly names: ReadonlySet<string>;
  /** An entry's declared inflated size, or undefined when there is no such entry. */
  size(name: string): number | undefined;
  /**
   * An entry's bytes. Refused unread when it declares more than `maxBytes`; refused while inflating when it yields
   * other than it declared.
   */
  read(name: string, maxBytes: number): Promise<Buffer>;
  close(): void;
}

const invalid = (message: string, details: Record<string, unknown> = {}) =>
  new ApiError('invalid_archive', { message, details });

const openFile = (lib: Yauzl, file: string) =>
  new Promise<ZipFile>((resolve, reject) => {
    lib.open(
      file,
      { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: true },
      (error, zip) =>
        error ? reject(invalid(`Not a zip archive this service can read: ${error.message}.`)) : resolve(zip),
    );
  });

/** Reads and checks the central directory: every entry's record, before any is inflated. */
function readDirectory(zip: ZipFile, bounds: ZipBounds): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    let total = 0;
    const refuse = (error: ApiError) => {
      zip.close();
      reject(error);
    };
    zip.on('error', (error: Error) => refuse(invalid(`The zip is damaged: ${error.message}.`)));
    zip.on('entry', (entry: Entry) => {
      const name = entry.fileName;
      if (name === '' || name.includes('\u0000')) return refuse(invalid('An entry has an empty name or a NUL in it.'));
      if (name.endsWith('/')) return zip.readEntry();
      if (entries.has(name))
        return refuse(invalid(`The entry ${JSON.stringify(name)} is there twice.`, { entry: name }));
      if (entry.isEncrypted())
        return refuse(invalid(`The entry ${JSON.stringify(name)} is encrypted.`, { entry: name }));
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        return refuse(invalid(`The entry ${JSON.stringify(name)} is neither stored nor deflated.`, { entry: name }));
      }
      total += entry.uncompressedSize;
      if (total > bounds.maxTotalBytes) {
        return refuse(
          invalid(`The entries inflate to more than ${bounds.maxTotalBytes} bytes together.`, {
            max_bytes: bounds.maxTotalBytes,
          }),
        );
      }
      if (
        entry.uncompressedSize >= RATIO_FROM_BYTES &&
        entry.uncompressedSize > MAX_RATIO * Math.max(1, entry.compressedSize)
      ) {
        return refuse(
          invalid(`The entry ${JSON.stringify(name)} inflates more than ${MAX_RATIO} times: a zip bomb.`, {
            entry: name,
          }),
        );
      }
      entries.set(name, entry);
      if (entries.size > bounds.maxEntries) {
        return refuse(invalid(`The archive has more than ${bounds.maxEntries} entries.`));
      }
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.readEntry();
  });
}

function inflate(zip: ZipFile, entry: Entry): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) =>
      reject(
        invalid(`The entry ${JSON.stringify(entry.fileName)} cannot be read: ${error.message}.`, {
          entry: entry.fileName,
        }),
      );
    zip.openReadStream(entry, (error, stream) => {
      if (error) return failed(error);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', failed);
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}

/** Opens the zip at `file` and checks its directory; 400 invalid_archive when it is not one this service reads. */
export async function openZip(file: string, bounds: ZipBounds): Promise<OpenedZip> {
  const zip = await openFile(await loadYauzl(), file);
  const entries = await readDirectory(zip, bounds);
  return {
    names: new Set(entries.keys()),
    size: (name) => entries.get(name)?.uncompressedSize,
    async read(name, maxBytes) {
      const entry = entries.get(name);
      if (entry === undefined) throw invalid(`The archive has no entry ${JSON.stringify(name)}.`, { entry: name });
      if (entry.uncompressedSize > maxBytes) {
        throw invalid(
          `The entry ${JSON.stringify(name)} declares ${entry.uncompressedSize} bytes, more than ${maxBytes}.`,
          {
            entry: name,
            max_bytes: maxBytes,
          },
        );
      }
      return inflate(zip, entry);
    },
    close: () => zip.close(),
  };
}
