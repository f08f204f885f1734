/** Commands over a drop's versions: diff (what changed between two) and restore (an old one as the newest). */
import type { DropDiff } from '../../types.js';
import { ifMatchOption, integer, positional, str, usage } from '../args.js';
import type { Command, Io } from '../context.js';

const COLOURS = { added: '\x1b[32m', removed: '\x1b[31m', hunk: '\x1b[36m', header: '\x1b[1m', reset: '\x1b[0m' };

/** Colours only for a terminal, and never with NO_COLOR set (https://no-color.org). */
function wantsColour(io: Io): boolean {
  return io.stdout.isTTY === true && (io.env.NO_COLOR ?? '') === '';
}

/** One line of a unified diff, coloured by its kind. */
function colourLine(line: string): string {
  const colour =
    line.startsWith('+++') || line.startsWith('---')
      ? COLOURS.header
      : line.startsWith('+')
        ? COLOURS.added
        : line.startsWith('-')
          ? COLOURS.removed
          : line.startsWith('@@')
            ? COLOURS.hunk
            : undefined;
  return colour === undefined ? line : `${colour}${line}${COLOURS.reset}`;
}

/** The diff for people: the unified text (coloured on a terminal), then `+added -removed` and the versions. */
export function diffText(slug: string, diff: DropDiff, colour: boolean): string {
  const unified = diff.unified.replace(/\n$/, '');
  const body = unified === '' ? `No changes between version ${diff.from} and version ${diff.to} of ${slug}.` : unified;
  const lines = body.split('\n').map((line) => (colour && unified !== '' ? colourLine(line) : line));
  const approximate = diff.exact === false ? ' (approximate: the documents are large)' : '';
  const summary = `+${diff.added} -${diff.removed} lines, version ${diff.from} to version ${diff.to}${approximate}`;
  return `${lines.join('\n')}\n${summary}`;
}

/** `htmldrop diff`. */
export const diff: Command = {
  usage: 'diff <slug> [--from a] [--to b]',
  summary: "Show what changed in a drop's HTML between two versions",
  help: `Prints a unified diff of the drop's HTML from version a to version b, then a +added -removed summary line.
Coloured on a terminal (not with NO_COLOR set); JSON ({"from","to","unified","added","removed"}) otherwise.

  --from <a>   the older version (default: the one before --to)
  --to <b>     the newer version (default: the latest)`,
  options: { from: { type: 'string' }, to: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'diff');
    if (args.length > 1)
      throw usage(`diff takes one slug (got ${args.length} arguments); versions go in --from and --to.`);
    const from = integer(str(values, 'from'), '--from', 1);
    const to = integer(str(values, 'to'), '--to', 1);
    const { client } = await ctx.authenticated();
    const result = await client.diff(slug, {
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    });
    ctx.out.result(result, () => diffText(slug, result, wantsColour(ctx.io)));
  },
};

/** `htmldrop restore`. */
export const restore: Command = {
  usage: 'restore <slug> <n> [--if-match m]',
  summary: 'Publish an old version of a drop again, as its newest version',
  help: `Makes a new version of <slug> with version n's HTML and context (same URL; nothing is deleted), and prints the
drop. Version n must exist (exit 4 otherwise).

  --if-match <m>   restore only if version m is still the latest; otherwise nothing changes and the exit code is 7
                   (version_conflict), naming the latest version`,
  options: { 'if-match': { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'restore');
    const version = integer(positional(args, 1, 'n', 'restore'), '<n>', 1) ?? 1;
    if (args.length > 2) throw usage(`restore takes a slug and one version (got ${args.length} arguments).`);
    const ifMatch = ifMatchOption(values);
    const { client } = await ctx.authenticated();
    const drop = await client.restore(slug, version, ifMatch === undefined ? {} : { ifMatch });
    ctx.out.result(
      { action: 'restored', restored_version: version, drop },
      () => `Restored version ${version} of ${slug} as version ${drop.latest_version}\n${drop.url}`,
    );
  },
};
