/** `htmldrop resolve`: mark a comment on a drop resolved (docs/api.md, "Comments"). */
import { positional, usage } from '../args.js';
import type { Command } from '../context.js';

/** `htmldrop resolve`. */
export const resolve: Command = {
  usage: 'resolve <slug> <comment-id>',
  summary: 'Mark a comment on a drop resolved',
  help: `Marks the comment resolved in the drop's latest version and prints it (see: htmldrop feedback <slug>). To
resolve comments with the version that addresses them, use instead: htmldrop update <slug> <file> --resolves <ids>.`,
  options: {},
  async run(ctx, _values, args) {
    const slug = positional(args, 0, 'slug', 'resolve');
    const id = positional(args, 1, 'comment-id', 'resolve');
    if (args.length > 2) throw usage(`resolve takes a slug and one comment id (got ${args.length} arguments).`);
    const { client } = await ctx.authenticated();
    const comment = await client.resolveComment(slug, id);
    ctx.out.result(
      comment,
      () =>
        `Resolved ${comment.id} on ${slug}${comment.resolved_in_version === null ? '' : ` in version ${comment.resolved_in_version}`}.`,
    );
  },
};
