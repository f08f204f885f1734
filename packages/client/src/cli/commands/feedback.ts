/**
 * `htmldrop feedback`: the comments people left on a drop (or on all your drops), optionally waiting for the next
 * one (docs/api.md, "Comments").
 */
import type { Comment, CommentScope } from '../../types.js';
import { bool, integer, str, usage } from '../args.js';
import type { Command } from '../context.js';
import { when } from '../format.js';

/** Lines indented by two spaces, each with `prefix`. */
function indent(text: string, prefix = ''): string {
  return text
    .split(/\r?\n/)
    .map((line) => `  ${prefix}${line}`.trimEnd())
    .join('\n');
}

/** One comment as a block: a header line (id, drop, version, author, time, state), the quote, the body. */
export function commentBlock(comment: Comment): string {
  const where = comment.slug === undefined ? '' : ` on ${comment.slug}`;
  const state =
    comment.resolved_at === null
      ? 'open'
      : `resolved${comment.resolved_in_version === null ? '' : ` in version ${comment.resolved_in_version}`} ${when(comment.resolved_at)}`;
  const header = [
    `${comment.id}${where}`,
    `version ${comment.version}`,
    `${comment.author.name} (${comment.author.kind})`,
    when(comment.created_at),
    state,
  ].join('  ');
  return [header, ...(comment.quote === null ? [] : [indent(comment.quote, '> ')]), indent(comment.body)].join('\n');
}

/** The comments as blocks a blank line apart, with the `--since` of the next call; or what was waited for. */
function feedbackText(comments: readonly Comment[], since: number, waited: number): string {
  const last = comments.at(-1);
  if (last === undefined) {
    const after = since > 0 ? ` after ${when(since)}` : '';
    return waited > 0 ? `No feedback${after} within ${waited} s.` : `No feedback${after}.`;
  }
  const count = `${comments.length} comment${comments.length === 1 ? '' : 's'}`;
  return `${comments.map(commentBlock).join('\n\n')}\n\n${count}; next call: --since ${last.created_at}`;
}

/** `htmldrop feedback`. */
export const feedback: Command = {
  usage: 'feedback (<slug> | --all) [--since <ms>] [--wait <seconds>]',
  summary: 'Print the comments left on a drop, optionally waiting for new ones',
  help: `Prints the comments left on <slug> (with --all: on every drop of yours, each naming its drop), oldest first:
id, version, author (owner, member or guest), time, state (open or resolved), the quoted passage and the text.
People comment in the viewer's Comments panel; who may is the drop's --comments setting (publish, update).

  --all             every drop of yours instead of one
  --since <ms>      only comments created after this time (Unix ms; default 0: all). Each comment's created_at
                    increases: pass the last one to get only what is new
  --wait <seconds>  when nothing is new yet, wait up to this long for the first comment (longer than 60 s is
                    several requests in a row), then print what came, or nothing; exits 0 either way

JSON output is the API's answer, {"data":[Comment...]}. Mark a comment resolved with: htmldrop resolve <slug> <id>,
or upload the version that addresses it with: htmldrop update <slug> <file> --resolves <id,id>.`,
  options: {
    all: { type: 'boolean' },
    since: { type: 'string' },
    wait: { type: 'string' },
  },
  async run(ctx, values, args) {
    const all = bool(values, 'all');
    if (args.length > 1) throw usage(`feedback takes one <slug> (got ${args.length}).`);
    const slug = args[0];
    if (all && slug !== undefined) throw usage('feedback: give a <slug> or --all, not both.');
    if (!all && (slug === undefined || slug === '')) {
      throw usage('feedback: missing <slug> (or --all for every drop). See: htmldrop feedback --help');
    }
    const since = integer(str(values, 'since'), '--since', 0) ?? 0;
    const wait = integer(str(values, 'wait'), '--wait', 0) ?? 0;
    const scope: CommentScope = slug === undefined ? { all: true } : slug;
    const { client } = await ctx.authenticated();
    if (wait > 0 && !ctx.out.json) {
      ctx.out.note(`Waiting up to ${wait} s for feedback on ${slug ?? 'your drops'}... (Ctrl-C to stop)`);
    }
    const data = await client.collectComments(scope, { since, waitSeconds: wait });
    ctx.out.result({ data }, () => feedbackText(data, since, wait));
  },
};
