/**
 * Reading a document to publish from a file or stdin, with one clear error per failure: missing, a directory,
 * unreadable, binary, not UTF-8. Whether the text is HTML is html-checks' concern.
 */
import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { HtmlDropError } from './errors.js';
import { MAX_HTML_BYTES } from './html-checks.js';

export interface TextSource {
  readonly text: string;
  /** The path, or "stdin". */
  readonly name: string;
  readonly bytes: number;
}

export interface ReadOptions {
  /** Files larger than this are refused without being read (default: 4 times the HTML limit). */
  readonly maxReadBytes?: number;
  /** Used for "-" (default process.stdin). */
  readonly stdin?: Readable;
  /** What the file should be, in messages ("an HTML document", "a text file"). */
  readonly what?: string;
}

const DEFAULT_MAX_READ = 4 * MAX_HTML_BYTES;

function decode(buffer: Buffer, name: string, what: string): string {
  // NUL bytes do not occur in text documents; they are the surest sign of an image, archive or executable.
  if (buffer.subarray(0, 65_536).includes(0)) {
    throw new HtmlDropError('binary_file', `${name} is binary data, not ${what}.`, { details: { path: name } });
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch {
    throw new HtmlDropError('binary_file', `${name} is not valid UTF-8 text (binary data or another encoding).`, {
      details: { path: name },
    });
  }
}

async function readStream(stream: Readable, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += buffer.length;
    if (total > limit) {
      throw new HtmlDropError('html_too_large', `stdin holds more than ${limit} bytes: too large for ${what}.`, {
        details: { max_bytes: MAX_HTML_BYTES },
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads `path` ("-" for stdin) as UTF-8 text. */
export async function readTextSource(file: string, options: ReadOptions = {}): Promise<TextSource> {
  const limit = options.maxReadBytes ?? DEFAULT_MAX_READ;
  const what = options.what ?? 'an HTML document';
  if (file === '-') {
    const buffer = await readStream(options.stdin ?? process.stdin, limit, what);
    return { text: decode(buffer, 'stdin', what), name: 'stdin', bytes: buffer.length };
  }
  let buffer: Buffer;
  try {
    const stat = await fs.stat(file);
    if (stat.isDirectory()) {
      throw new HtmlDropError('is_directory', `${file} is a directory; give the path of a file.`, {
        details: { path: file },
      });
    }
    if (stat.isFile() && stat.size > limit) {
      throw new HtmlDropError('html_too_large', `${file} is ${stat.size} bytes: too large for ${what}.`, {
        details: { path: file, max_bytes: MAX_HTML_BYTES },
      });
    }
    buffer = await fs.readFile(file);
  } catch (error) {
    if (error instanceof HtmlDropError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new HtmlDropError('file_not_found', `${file}: no such file.`, { details: { path: file } });
    }
    if (code === 'EISDIR') {
      throw new HtmlDropError('is_directory', `${file} is a directory; give the path of a file.`, {
        details: { path: file },
      });
    }
    throw new HtmlDropError('file_unreadable', `Cannot read ${file} (${code ?? 'error'}).`, {
      details: { path: file },
      cause: error,
    });
  }
  return { text: decode(buffer, file, what), name: file, bytes: buffer.length };
}
