/** `htmldrop export` and `htmldrop import`: every drop in one zip, and back (docs/api.md, "Export and import"). */
import fs from 'node:fs';
import path from 'node:path';
import type { ImportResult } from '../../types.js';
import { positional, str, usage } from '../args.js';
import type { Command, Context } from '../context.js';
import { table } from '../format.js';

const MB = 1_048_576;
const megabytes = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/** Progress on a terminal's stderr, rewritten in place at most every 100 ms; nothing when stderr is not a terminal. */
function progress(ctx: Context): { show(text: string): void; done(): void } {
  const stderr = ctx.io.stderr;
  if (stderr.isTTY !== true) return { show: () => undefined, done: () => undefined };
  let last = 0;
  let shown = false;
  return {
    show(text) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      stderr.write(`\r\x1b[K${text}`);
    },
    done() {
      if (shown) stderr.write('\r\x1b[K');
    },
  };
}

/** `htmldrop export`. */
export const exportCommand: Command = {
  usage: 'export [-o <file>] [--slug <slug>]...',
  summary: 'Download every drop (all versions, files, contexts, comments) as one zip',
  help: `Downloads your drops as one zip archive: every version's HTML, files and context, each drop's metadata and settings,
comments and read receipts. -o names the file (default: htmldrop-export-<date>.zip, the UTC date, in
the current folder); it appears only once complete. --slug (repeatable) exports only those drops. Import it here or
on another htmldrop service with: htmldrop import <file>`,
  options: { output: { type: 'string', short: 'o' }, slug: { type: 'string', multiple: true } },
  async run(ctx, values) {
    const { client } = await ctx.authenticated();
    const slugs = (values.slug as string[] | undefined) ?? [];
    const today = new Date().toISOString().slice(0, 10);
    const file = path.resolve(ctx.io.cwd, str(values, 'output') ?? `htmldrop-export-${today}.zip`);
    const bar = progress(ctx);
    let result: { file: string; bytes: number };
    try {
      result = await client.exportToFile(file, {
        slugs,
        onProgress: (bytes) => bar.show(`Exporting... ${megabytes(bytes)}`),
      });
    } finally {
      bar.done();
    }
    ctx.out.result(result, () => `Exported ${megabytes(result.bytes)} to ${result.file}`);
  },
};

/** The answer of an import, for a human. */
function importText(result: ImportResult): string {
  const lines = [`Imported ${result.imported.length} drop(s), skipped ${result.skipped.length}.`];
  if (result.imported.length > 0) {
    lines.push(
      '',
      table([['FROM', 'NEW SLUG', 'VERSIONS'], ...result.imported.map((i) => [i.from, i.slug, String(i.versions)])]),
    );
  }
  if (result.skipped.length > 0) {
    lines.push(
      '',
      table([
        ['FROM', 'SKIPPED BECAUSE'],
        ...result.skipped.map((s) => [s.from, s.slug ? `${s.reason} (${s.slug})` : s.reason]),
      ]),
    );
  }
  return lines.join('\n');
}

/** `htmldrop import`. */
export const importCommand: Command = {
  usage: 'import <file>',
  summary: 'Bring in the drops of an export (htmldrop export), with their history',
  help: `Uploads a zip made by htmldrop export (here or on another htmldrop service) and recreates its drops in your account:
every version with its number, HTML, files, context and time, metadata, settings (a passcode stays set) and
comments. Drops get new slugs; the answer maps each old slug to its new one. Importing the same file again creates
nothing. Drops the service cannot take (your drop quota, its limits) are skipped and named; a damaged or hostile
archive is refused whole (invalid_archive) and nothing is imported.`,
  options: {},
  async run(ctx, _values, args) {
    const file = path.resolve(ctx.io.cwd, positional(args, 0, 'file', 'import'));
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw usage(`import: there is no file ${file}.`);
    const { client } = await ctx.authenticated();
    const bar = progress(ctx);
    let result: ImportResult;
    try {
      result = await client.importArchive(file, {
        onProgress: (sent, total) =>
          bar.show(
            sent < total
              ? `Uploading... ${megabytes(sent)} of ${megabytes(total)}`
              : 'Uploaded; the service is checking and importing...',
          ),
      });
    } finally {
      bar.done();
    }
    ctx.out.result(result, () => importText(result));
  },
};
