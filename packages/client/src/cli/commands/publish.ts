/**
 * Commands that upload a document: publish (a new drop, or the upsert by tags of docs/api.md section 4.3) and update
 * (a new version of a drop).
 */
import { assertPublishable, checkHtml, documentTitle, type HtmlWarning } from '../../html-checks.js';
import { readTextSource } from '../../source.js';
import type { Drop } from '../../types.js';
import { describeMatch, upsertDrop } from '../../upsert.js';
import { bool, list, parsePairs, positional, str, usage } from '../args.js';
import type { Command, Context } from '../context.js';
import { maybeOpen } from './open.js';

/** Reads the document ("-" is stdin), refuses what is not publishable, and warns about what breaks standalone. */
async function readHtml(ctx: Context, file: string, force: boolean) {
  const source = await readTextSource(file, { stdin: ctx.io.stdin });
  assertPublishable(source.text, { force, name: source.name });
  const warnings = checkHtml(source.text);
  for (const w of warnings) ctx.out.warn(`${source.name}: ${w.message}`);
  return { html: source.text, name: source.name, warnings };
}

/** The text of --context-file (at most 1 MiB read), or undefined without it. */
async function readContext(file: string | undefined, ctx: Context): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const source = await readTextSource(file, { stdin: ctx.io.stdin, what: 'a text file', maxReadBytes: 1_048_576 });
  return source.text;
}

/** The human result of publish and update: what happened, and the URL. */
function publishedText(action: 'created' | 'updated', drop: Drop): string {
  const verb = action === 'created' ? 'Published' : 'Updated';
  return `${verb} "${drop.title}" (version ${drop.latest_version}${drop.locked ? ', passcode' : ''})\n${drop.url}`;
}

/** The warnings as the JSON result carries them. */
function warningsJson(warnings: readonly HtmlWarning[]) {
  return warnings.map(({ code, message }) => ({ code, message }));
}

/** `htmldrop publish`. */
export const publish: Command = {
  usage:
    'publish <file|-> [--title <t>] [--description <d>] [--context-file <f>] [--passcode <p>] [--meta k=v]... [--upsert k=v]... [--force] [--open]',
  summary: 'Publish a standalone HTML document (new drop, or upsert by tags)',
  help: `Uploads one complete, standalone HTML document ("-" reads stdin) and prints its public URL.

  --title <t>           title (default: the document's <title>)
  --description <d>     description (at most 500 characters)
  --context-file <f>    a text file recorded with this version as its context (reasoning trace)
  --passcode <p>        share gate, at least 4 characters
  --meta k=v            owner-only tag; repeat for several
  --upsert k=v          lookup, then mutate: the drop tagged with all these pairs gets a new version; if none has
                        them, a new drop is created with them; if several do, nothing is changed (exit 7).
                        Concurrent upserts on this machine are serialized with a lock file. With --meta, on
                        update the given tags are merged into the drop's tags.
  --force               upload even if the file does not look like HTML
  --open                open the drop in a browser afterwards

Before uploading it warns about what breaks in a standalone document: relative src/href to local files, a missing
<!doctype html>, a size near the 2 MiB limit.`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    passcode: { type: 'string' },
    meta: { type: 'string', multiple: true },
    upsert: { type: 'string', multiple: true },
    force: { type: 'boolean' },
    open: { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const file = positional(args, 0, 'file|-', 'publish');
    if (args.length > 1) throw usage(`publish takes one file (got ${args.length}).`);
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const match = parsePairs(list(values, 'upsert'), '--upsert');
    const { html, name, warnings } = await readHtml(ctx, file, bool(values, 'force'));
    const title = str(values, 'title') ?? documentTitle(html);
    if (title === undefined) throw usage(`--title is required: ${name} has no <title>.`);
    const context = await readContext(str(values, 'context-file'), ctx);
    const description = str(values, 'description');
    const passcode = str(values, 'passcode');
    const { client } = await ctx.authenticated();
    const optional = {
      ...(description === undefined ? {} : { description }),
      ...(context === undefined ? {} : { context }),
      ...(passcode === undefined ? {} : { passcode }),
    };
    let result: { action: 'created' | 'updated'; drop: Drop };
    if (Object.keys(match).length > 0) {
      result = await upsertDrop(
        client,
        { match, html, title, ...optional, ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}) },
        { onWait: () => ctx.out.note(`Waiting for another upsert of ${describeMatch(match)} to finish...`) },
      );
    } else {
      const drop = await client.createDrop({
        title,
        html,
        ...optional,
        ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}),
      });
      result = { action: 'created', drop };
    }
    ctx.out.result({ ...result, warnings: warningsJson(warnings) }, () => publishedText(result.action, result.drop));
    if (bool(values, 'open')) await maybeOpen(ctx, result.drop.url);
  },
};

/** `htmldrop update`. */
export const update: Command = {
  usage: 'update <slug> <file|-> [--title <t>] [--description <d>] [--context-file <f>] [--meta k=v]... [--force]',
  summary: 'Upload a new version of a drop',
  help: `Uploads a new version of <slug> (same URL, latest_version + 1). "-" reads stdin.

  --title <t>, --description <d>   change them too
  --context-file <f>               context (reasoning trace) of this version
  --meta k=v                       tags to set; merged into the drop's existing tags
  --force                          upload even if the file does not look like HTML`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    meta: { type: 'string', multiple: true },
    force: { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'update');
    const file = positional(args, 1, 'file|-', 'update');
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const { html, warnings } = await readHtml(ctx, file, bool(values, 'force'));
    const context = await readContext(str(values, 'context-file'), ctx);
    const title = str(values, 'title');
    const description = str(values, 'description');
    const { client } = await ctx.authenticated();
    const metadata = Object.keys(meta).length > 0 ? { ...(await client.getDrop(slug)).metadata, ...meta } : undefined;
    const drop = await client.updateDrop(slug, {
      html,
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
      ...(context === undefined ? {} : { context }),
      ...(metadata === undefined ? {} : { metadata }),
    });
    ctx.out.result({ action: 'updated', drop, warnings: warningsJson(warnings) }, () => publishedText('updated', drop));
  },
};
