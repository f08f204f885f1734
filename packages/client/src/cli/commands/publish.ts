/**
 * Commands that upload a document: publish (a new drop, or the upsert by tags of docs/api.md section 4.3) and update
 * (a new version of a drop). Either takes one HTML file, stdin, or a folder: its index.html with the files beside it
 * (docs/api.md, "Many files in one drop").
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { HtmlDropClient } from '../../client.js';
import { describeExpiry } from '../../expires.js';
import { type FolderEntry, INDEX, readFolder } from '../../folder.js';
import { assertPublishable, checkHtml, documentTitle, type HtmlWarning } from '../../html-checks.js';
import { describeNetwork, sameNetwork } from '../../network.js';
import { readTextSource } from '../../source.js';
import type { Drop, DropFiles, Metadata } from '../../types.js';
import { describeMatch, type UpsertConflict, type UpsertInput, upsertDrop, withWarningsOf } from '../../upsert.js';
import {
  bool,
  commentSetting,
  expiresOption,
  idList,
  ifMatchOption,
  list,
  networkOption,
  parsePairs,
  positional,
  str,
  usage,
  type Values,
  visibilityFields,
} from '../args.js';
import type { Command, Context } from '../context.js';
import { findingLines } from '../format.js';
import { maybeOpen } from './open.js';

/** What publish and update did: the action, the drop, and what other writers did meanwhile (upsert). */
interface Published {
  readonly action: 'created' | 'updated';
  readonly drop: Drop;
  readonly conflicts?: readonly UpsertConflict[];
}

/** What publish and update upload: the document, and a folder's files with their listing. */
interface Upload {
  readonly html: string;
  readonly name: string;
  readonly warnings: readonly HtmlWarning[];
  /** A folder's files; absent for one HTML file. */
  readonly files?: DropFiles;
  readonly entries: readonly FolderEntry[];
  readonly skipped: readonly string[];
  readonly totalBytes: number;
}

/**
 * Reads the document ("-" is stdin) or a folder (its index.html and the files beside it), refuses what is not
 * publishable, and warns about what will break: in a standalone document its references to local files, in a folder
 * references that are absolute, leave it or name no file of it.
 */
async function readUpload(ctx: Context, target: string, force: boolean): Promise<Upload> {
  const isFolder = target !== '-' && (await fs.stat(target).catch(() => undefined))?.isDirectory() === true;
  if (isFolder) {
    const folder = await readFolder(target, { force });
    const name = path.join(target, INDEX);
    for (const w of folder.warnings) ctx.out.warn(`${target}: ${w.message}`);
    const { html, warnings, files, entries, skipped, totalBytes } = folder;
    return { html, name, warnings, files, entries, skipped, totalBytes };
  }
  const source = await readTextSource(target, { stdin: ctx.io.stdin });
  assertPublishable(source.text, { force, name: source.name });
  const warnings = checkHtml(source.text);
  for (const w of warnings) ctx.out.warn(`${source.name}: ${w.message}`);
  return { html: source.text, name: source.name, warnings, entries: [], skipped: [], totalBytes: source.bytes };
}

/** `--dry-run`: what would be uploaded, and nothing sent. */
function dryRun(ctx: Context, upload: Upload): void {
  const { name, entries, skipped, totalBytes, warnings } = upload;
  const size = Buffer.byteLength(upload.html);
  const json = {
    action: 'dry_run',
    document: name,
    size_bytes: size,
    files: entries,
    total_bytes: totalBytes,
    skipped,
    warnings: warningsJson(warnings),
  };
  ctx.out.result(json, () => {
    const width = Math.max(0, ...entries.map((e) => e.path.length));
    const lines = [
      `Would upload ${name} (${size.toLocaleString('en-US')} B)${entries.length === 0 ? '' : ` with ${entries.length} file(s)`}, ${totalBytes.toLocaleString('en-US')} B in all:`,
      ...entries.map(
        (e) => `  ${e.path.padEnd(width)}  ${e.size_bytes.toLocaleString('en-US').padStart(12)} B  ${e.encoding}`,
      ),
    ];
    if (skipped.length > 0) lines.push(`Skipped: ${skipped.join(', ')}`);
    lines.push('Nothing was sent (--dry-run).');
    return lines.join('\n');
  });
}

/** The text of --context-file (at most 1 MiB read), or undefined without it. */
async function readContext(file: string | undefined, ctx: Context): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const source = await readTextSource(file, { stdin: ctx.io.stdin, what: 'a text file', maxReadBytes: 1_048_576 });
  return source.text;
}

/**
 * The human result of publish and update: what happened, the URL, the drop's own origin (docs/api.md, "Each drop on
 * its own origin") when the service has one, a network restriction, the comments resolved, the expiry.
 */
function publishedText(action: 'created' | 'updated', drop: Drop, resolves: readonly string[] = []): string {
  const verb = action === 'created' ? 'Published' : 'Updated';
  const lines = [
    `${verb} "${drop.title}" (version ${drop.latest_version}${drop.locked ? ', passcode' : ''})`,
    drop.url,
  ];
  if ((drop.content_url ?? null) !== null) lines.push(`Own origin: ${drop.content_url}`);
  const network = drop.network ?? 'open';
  if (network !== 'open') lines.push(`Network: ${describeNetwork(network)}`);
  if (drop.visibility === 'signed_in') lines.push('Visible to: anyone signed in');
  if (drop.visibility === 'people') {
    lines.push(`Visible to: you${(drop.allow ?? []).length > 0 ? `, ${(drop.allow ?? []).join(', ')}` : ' only'}`);
  }
  if (resolves.length > 0) lines.push(`Resolved in version ${drop.latest_version}: ${resolves.join(', ')}`);
  if ((drop.expires_at ?? null) !== null) lines.push(`Expires ${describeExpiry(drop.expires_at)}`);
  return lines.join('\n');
}

/**
 * The JSON result of publish and update: `resolved` only when --resolves was given, `conflicts` only when other
 * writers got in between an upsert's lookup and its write.
 */
function resultJson(result: Published, warnings: readonly HtmlWarning[], resolves: string[]) {
  const { action, drop, conflicts = [] } = result;
  return {
    action,
    drop,
    warnings: warningsJson(warnings),
    ...(resolves.length > 0 ? { resolved: resolves } : {}),
    ...(conflicts.length > 0 ? { conflicts } : {}),
  };
}

/**
 * What the look before publishing found in the version just published (docs/api.md, "A look before publishing"), on
 * stderr with what to do; nothing when it was clean.
 */
function warnFindings(ctx: Context, drop: Drop): void {
  const lines = findingLines(drop.warnings);
  if (lines.length === 0) return;
  ctx.out.warn(`version ${drop.latest_version} looks like it carries secrets or personal data, and it is public now:`);
  for (const line of lines) ctx.out.note(`  ${line}`);
  ctx.out.note(
    'Remove them and publish again (htmldrop update), rotate any key shown, and delete this version (htmldrop rm <slug> --version <n>). With --block nothing is published when something is found (exit 8).',
  );
}

/** `scan: "block"` when --block was given. */
const scanOf = (values: Values) => (bool(values, 'block') ? { scan: 'block' as const } : {});

/** The upsert of publish --upsert, telling on stderr when another writer got in between. */
function upsert(ctx: Context, client: HtmlDropClient, input: UpsertInput): Promise<Published> {
  const match = input.match;
  return upsertDrop(client, input, {
    onWait: () => ctx.out.note(`Waiting for another upsert of ${describeMatch(match)} to finish...`),
    onConflict: (conflict) => ctx.out.warn(conflict.message),
  });
}

/** The optional fields of publish, as the create and the upsert take them. */
function optionalFields(values: Values, context: string | undefined) {
  const description = str(values, 'description');
  const passcode = str(values, 'passcode');
  const comments = commentSetting(values);
  const network = networkOption(values);
  return {
    ...(description === undefined ? {} : { description }),
    ...(context === undefined ? {} : { context }),
    ...(passcode === undefined ? {} : { passcode }),
    ...(comments === undefined ? {} : { comments }),
    ...(network === undefined ? {} : { network }),
    ...visibilityFields(values),
  };
}

/** The warnings as the JSON result carries them. */
function warningsJson(warnings: readonly HtmlWarning[]) {
  return warnings.map(({ code, message }) => ({ code, message }));
}

/** `htmldrop publish`. */
export const publish: Command = {
  usage:
    'publish <file|dir|-> [--title <t>] [--description <d>] [--context-file <f>] [--passcode <p>] [--comments <who>] [--expires <when>] [--network <policy>] [--visibility <who>] [--allow <entries>]... [--meta k=v]... [--upsert k=v]... [--resolves <ids>] [--block] [--force] [--dry-run] [--open]',
  summary: 'Publish an HTML document, or a folder of files (new drop, or upsert by tags)',
  help: `Uploads one complete, standalone HTML document ("-" reads stdin) and prints its public URL.

A folder publishes <dir>/index.html as the document with every other file under <dir> beside it (images,
stylesheets, scripts, data, fonts: a report with its charts, a Vite build's dist/), loaded by relative URL.
Dotfiles and dot-folders (.git/, .DS_Store) are skipped. Names must be letters, digits, ".", "_" and "-".

  --title <t>           title (default: the document's <title>)
  --description <d>     description (at most 500 characters)
  --context-file <f>    a text file recorded with this version as its context (reasoning trace)
  --passcode <p>        share gate, at least 4 characters
  --comments <who>      who may comment in the viewer: off, signed_in (the service's default) or open
  --expires <when>      the drop expires: 30m, 12h, 7d, 2w, an ISO date (2026-12-31, 2026-12-31T18:00:00Z) or
                        never; from 1 minute to 365 days ahead. Then its URL answers 410 and it is deleted
  --network <policy>    what the drop may load from the network: open (the default), none (for sensitive reports:
                        no fetch, images, scripts, fonts, frames or form posts to other hosts; a link the reader
                        follows still leaves), or origins separated by commas
                        (https://cdn.jsdelivr.net,https://unpkg.com: scheme, host, optional port; no path)
  --visibility <who>    who can see it: public (the default: anyone with the URL), signed_in (anyone who signs in
                        to the service) or people (you and those in --allow)
  --allow <entries>     who may see a people drop: usernames, email addresses, @domain (anyone with a verified
                        email there), separated by commas or repeated; alone, it makes the drop people
  --meta k=v            owner-only tag; repeat for several
  --upsert k=v          lookup, then mutate: the drop tagged with all these pairs gets a new version; if none has
                        them, a new drop is created with them; if several do, nothing is changed (exit 7).
                        Concurrent upserts on this machine are serialized with a lock file; a version another
                        machine published meanwhile is never lost: this one goes on top of it, with a warning
                        (exit 7 if other writers keep getting in first). With --meta, on update the given tags
                        are merged into the drop's tags. --expires and --network on update: one more write
                        (with --expires, "never" removes an expiry).
  --resolves <ids>      with --upsert: comment ids (c_...,c_...) the new version addresses; they are marked resolved
                        in it. When no drop matches, nothing is published (exit 2)
  --block               publish nothing if the service finds what looks like secrets or personal data (API keys,
                        private keys, tokens, passwords in URLs, card numbers, IBANs, lists of email addresses or
                        phone numbers): exit 8, the findings on stderr. Without it they are published and the
                        findings printed on stderr as warnings (and in the JSON result's drop.warnings)
  --force               upload even if the file does not look like HTML
  --dry-run             list what would be uploaded (the document and each file, with sizes) and send nothing
  --open                open the drop in a browser afterwards

Before uploading it warns about what breaks in a standalone document: relative src/href to local files, a missing
<!doctype html>, a size near the 2 MiB limit. For a folder: references that are absolute (/img/a.png), leave the
folder (../a.png) or name no file of it.

When the service gives each drop its own origin, the result names it ("Own origin", drop.content_url): there the
document's localStorage, IndexedDB and cookies work.`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    passcode: { type: 'string' },
    comments: { type: 'string' },
    expires: { type: 'string' },
    network: { type: 'string' },
    visibility: { type: 'string' },
    allow: { type: 'string', multiple: true },
    meta: { type: 'string', multiple: true },
    upsert: { type: 'string', multiple: true },
    resolves: { type: 'string', multiple: true },
    block: { type: 'boolean' },
    force: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    open: { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const file = positional(args, 0, 'file|dir|-', 'publish');
    if (args.length > 1) throw usage(`publish takes one file (got ${args.length}).`);
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const match = parsePairs(list(values, 'upsert'), '--upsert');
    const resolves = idList(values, 'resolves');
    const expires = expiresOption(values);
    // Refused before the file is read, like the other flags.
    commentSetting(values);
    networkOption(values);
    visibilityFields(values);
    if (resolves.length > 0 && Object.keys(match).length === 0) {
      throw usage(
        '--resolves marks comments resolved in a new version: use it with --upsert, or run: htmldrop update.',
      );
    }
    const upload = await readUpload(ctx, file, bool(values, 'force'));
    const { html, name, warnings } = upload;
    if (bool(values, 'dry-run')) return dryRun(ctx, upload);
    const title = str(values, 'title') ?? documentTitle(html);
    if (title === undefined) throw usage(`--title is required: ${name} has no <title>.`);
    const optional = {
      ...optionalFields(values, await readContext(str(values, 'context-file'), ctx)),
      ...(upload.files === undefined ? {} : { files: upload.files }),
    };
    const { client } = await ctx.authenticated();
    const metadata: { metadata?: Metadata } = Object.keys(meta).length > 0 ? { metadata: meta } : {};
    let result: Published;
    if (Object.keys(match).length > 0) {
      result = await upsert(ctx, client, {
        match,
        html,
        title,
        ...optional,
        ...metadata,
        ...(expires === undefined ? {} : { expires_at: expires }),
        ...(resolves.length > 0 ? { resolves } : {}),
        ...scanOf(values),
      });
    } else {
      const expiry = expires === undefined || expires === null ? {} : { expires_at: expires };
      result = {
        action: 'created',
        drop: await client.createDrop({ title, html, ...optional, ...metadata, ...expiry, ...scanOf(values) }),
      };
    }
    warnFindings(ctx, result.drop);
    ctx.out.result(resultJson(result, warnings, resolves), () => publishedText(result.action, result.drop, resolves));
    if (bool(values, 'open')) await maybeOpen(ctx, result.drop.url);
  },
};

/** `htmldrop update`. */
export const update: Command = {
  usage:
    'update <slug> <file|dir|-> [--title <t>] [--description <d>] [--context-file <f>] [--meta k=v]... [--resolves <ids>] [--comments <who>] [--expires <when>] [--network <policy>] [--visibility <who>] [--allow <entries>]... [--if-match <n>] [--block] [--force] [--dry-run]',
  summary: 'Upload a new version of a drop',
  help: `Uploads a new version of <slug> (same URL, latest_version + 1). "-" reads stdin; a folder uploads its
index.html with the files beside it (see publish). A version is complete in itself: an HTML file alone makes a
version without files; unchanged files cost the service no storage.

  --title <t>, --description <d>   change them too
  --context-file <f>               context (reasoning trace) of this version
  --meta k=v                       tags to set; merged into the drop's existing tags
  --resolves <ids>                 comment ids (c_...,c_...; see: htmldrop feedback) this version addresses: they are
                                   marked resolved in it. An id that is not a comment of the drop: exit 2, nothing
                                   uploaded
  --comments <who>                 who may comment: off, signed_in or open (one more write after the upload)
  --expires <when>                 30m, 12h, 7d, 2w, an ISO date, or never (clears it): when the drop expires (one
                                   more write after the upload)
  --network <policy>               open, none, or origins separated by commas (https://cdn.jsdelivr.net,...): what
                                   the drop may load from the network (one more write after the upload)
  --visibility <who>               public, signed_in or people: who can see it (with the upload)
  --allow <entries>                usernames, email addresses or @domain who may see a people drop (replaces the list)
  --if-match <n>                   upload only if version n is still the latest; otherwise nothing is uploaded and
                                   the exit code is 7 (version_conflict), naming the latest version
  --block                          upload nothing if the service finds what looks like secrets or personal
                                   data: exit 8, the findings on stderr (without it: warnings on stderr)
  --force                          upload even if the file does not look like HTML
  --dry-run                        list what would be uploaded and send nothing`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    meta: { type: 'string', multiple: true },
    resolves: { type: 'string', multiple: true },
    comments: { type: 'string' },
    expires: { type: 'string' },
    network: { type: 'string' },
    visibility: { type: 'string' },
    allow: { type: 'string', multiple: true },
    'if-match': { type: 'string' },
    block: { type: 'boolean' },
    force: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'update');
    const file = positional(args, 1, 'file|dir|-', 'update');
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const comments = commentSetting(values);
    const resolves = idList(values, 'resolves');
    const expires = expiresOption(values);
    const network = networkOption(values);
    const visibility = visibilityFields(values);
    const ifMatch = ifMatchOption(values);
    const upload = await readUpload(ctx, file, bool(values, 'force'));
    const { html, warnings } = upload;
    if (bool(values, 'dry-run')) return dryRun(ctx, upload);
    const context = await readContext(str(values, 'context-file'), ctx);
    const title = str(values, 'title');
    const description = str(values, 'description');
    const { client } = await ctx.authenticated();
    const metadata = Object.keys(meta).length > 0 ? { ...(await client.getDrop(slug)).metadata, ...meta } : undefined;
    let drop = await client.updateDrop(
      slug,
      {
        html,
        ...(upload.files === undefined ? {} : { files: upload.files }),
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
        ...(context === undefined ? {} : { context }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(resolves.length > 0 ? { resolves } : {}),
        ...visibility,
        ...scanOf(values),
      },
      ifMatch === undefined ? {} : { ifMatch },
    );
    const put = drop;
    const patch = {
      ...(comments !== undefined && comments !== drop.comments ? { comments } : {}),
      ...(expires !== undefined && expires !== drop.expires_at ? { expires_at: expires } : {}),
      ...(network !== undefined && !sameNetwork(network, drop.network ?? 'open') ? { network } : {}),
    };
    if (Object.keys(patch).length > 0) drop = withWarningsOf(put, await client.patchDrop(slug, patch));
    warnFindings(ctx, drop);
    ctx.out.result(resultJson({ action: 'updated', drop }, warnings, resolves), () =>
      publishedText('updated', drop, resolves),
    );
  },
};
