/** `htmldrop rm`: delete a drop, or one of its versions (docs/api.md section 4.3). */
import { integer, positional, str } from '../args.js';
import type { Command } from '../context.js';

/** `htmldrop rm`. */
export const rm: Command = {
  usage: 'rm <slug> [--version n]',
  summary: 'Delete a drop, or one of its versions',
  help: `Deletes the drop and all its versions, or with --version n only that version (not the only one: exit 7).`,
  options: { version: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'rm');
    const version = integer(str(values, 'version'), '--version', 1);
    const { client } = await ctx.authenticated();
    if (version !== undefined) {
      const drop = await client.deleteVersion(slug, version);
      ctx.out.result(
        { deleted: 'version', slug, version, drop },
        () => `Deleted version ${version} of ${slug}; the latest is now version ${drop.latest_version}.`,
      );
      return;
    }
    await client.deleteDrop(slug);
    ctx.out.result({ deleted: 'drop', slug }, () => `Deleted ${slug}.`);
  },
};
