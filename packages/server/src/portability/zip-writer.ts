/**
 * The export's zip, streamed (docs/decisions/0039-export-and-import.md): entries are handed to yazl one at a time, and
 * the next one only when yazl starts on the one before, so at most two entries' bytes are in memory; yazl's output is
 * piped with back-pressure, so a slow reader slows the reads from the database instead of filling memory. yazl is
 * loaded on the first export, not at start-up.
 */
import { PassThrough, Readable } from 'node:stream';
import type { ArchiveEntry } from '../domain/export.js';

type Yazl = typeof import('yazl');
let yazl: Promise<Yazl> | undefined;
const loadYazl = (): Promise<Yazl> => {
  yazl ??= import('yazl').then((module) => ((module as { default?: Yazl }).default ?? module) as Yazl);
  return yazl;
};

/**
 * A zip of `entries`, in their order, as a stream. An entry that fails to read, or a reader that goes away, ends the
 * stream with an error (the HTTP answer is then cut short, which a client sees as a broken download).
 */
export function zipStream(entries: AsyncIterable<ArchiveEntry>): Readable {
  const out = new PassThrough();
  const gone = new Promise<'gone'>((resolve) => out.once('close', () => resolve('gone')));
  const write = async () => {
    const { ZipFile } = await loadYazl();
    const zip = new ZipFile();
    zip.on('error', (error: Error) => out.destroy(error));
    zip.outputStream.on('error', (error: Error) => out.destroy(error));
    zip.outputStream.pipe(out);
    for await (const entry of entries) {
      // Wait until yazl starts on this entry (the one before it is written) before producing the next.
      const started = new Promise<'started'>((resolve) => {
        zip.addReadStreamLazy(
          entry.path,
          { mtime: new Date(entry.mtime), compress: entry.compress },
          (callback: (error: Error | null, stream: Readable) => void) => {
            resolve('started');
            entry.read().then(
              (bytes) => callback(null, Readable.from([bytes], { objectMode: false })),
              (error: Error) => out.destroy(error),
            );
          },
        );
      });
      if ((await Promise.race([started, gone])) === 'gone') return;
    }
    zip.end();
  };
  write().catch((error: Error) => out.destroy(error));
  return out;
}
