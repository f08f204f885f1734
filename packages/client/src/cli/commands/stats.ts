/** `htmldrop stats`: read receipts of a drop (docs/api.md, "Read receipts"). */
import type { DropStats } from '../../types.js';
import { positional } from '../args.js';
import type { Command } from '../context.js';
import { table, when } from '../format.js';

/** The totals, then one row per version. */
function statsText(slug: string, stats: DropStats): string {
  const viewers = `${stats.unique_viewers} viewer${stats.unique_viewers === 1 ? '' : 's'}`;
  const totals = [
    ['Drop', slug],
    ['Views', `${stats.views} (${viewers})`],
    ['First viewed', when(stats.first_viewed_at)],
    ['Last viewed', when(stats.last_viewed_at)],
  ]
    .map(([k, v]) => `${(k ?? '').padEnd(14)}${v}`)
    .join('\n');
  const rows = [
    ['VERSION', 'VIEWS', 'VIEWERS', 'LAST VIEWED'],
    ...stats.versions.map((v) => [
      String(v.version),
      String(v.views),
      String(v.unique_viewers),
      when(v.last_viewed_at),
    ]),
  ];
  return `${totals}\n\n${table(rows)}`;
}

/** `htmldrop stats`. */
export const stats: Command = {
  usage: 'stats <slug>',
  summary: "Show a drop's read receipts: views, distinct viewers, times",
  help: `Read receipts: the drop's views (renders of the viewer page), distinct viewers (one viewer on two UTC days counts twice) and the
first and last view, then the same for each version, newest first. Views may lag by a few seconds.`,
  options: {},
  async run(ctx, _values, args) {
    const slug = positional(args, 0, 'slug', 'stats');
    const { client } = await ctx.authenticated();
    const result = await client.stats(slug);
    ctx.out.result(result, () => statsText(slug, result));
  },
};
