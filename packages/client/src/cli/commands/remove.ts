/** `htmldrop rm`: delete a drop, or one of its versions (docs/api.md section 4.3). */
import { ifMatchOption, integer, positional, str, usage } from '../args.js';
import type { Command } from '../context.js';

/** `htmldrop rm`. */
export const rm: Command = {
  usage: 'rm <slug> [--version n] [--if-match n]',
  summary: 'Delete a drop, or one of its versions',
  help: `Deletes the drop and all its versions, or with --version n only that version (not the only one: exit 7).

  --if-match <n>   delete the drop only if version n is still its latest (someone may have published since);
                   otherwise nothing is deleted and the exit code is 7 (version_conflict)`,
  options: { version: { type: 'string' }, 'if-match': { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'rm');
    const version = integer(str(values, 'version'), '--version', 1);
    const ifMatch = ifMatchOption(values);
    if (version !== undefined && ifMatch !== undefined) {
      throw usage('rm: --if-match applies to deleting the whole drop, not one version.');
    }
    const { client } = await ctx.authenticated();
    if (version !== undefined) {
      const drop = await client.deleteVersion(slug, version);
      ctx.out.result(
        { deleted: 'version', slug, version, drop },
        () => `Deleted version ${version} of ${slug}; the latest is now version ${drop.latest_version}.`,
      );
      return;
    }
    await client.deleteDrop(slug, ifMatch === undefined ? {} : { ifMatch });
    ctx.out.result({ deleted: 'drop', slug }, () => `Deleted ${slug}.`);
  },
};
