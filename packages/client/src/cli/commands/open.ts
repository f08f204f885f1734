/** `htmldrop open`: a drop in the browser (docs/api.md section 4.6); and the browser opening other commands share. */
import { HtmlDropError } from '../../errors.js';
import { openUrl } from '../../open.js';
import { bool, integer, positional, str } from '../args.js';
import type { Command, Context } from '../context.js';

/** Opens the URL in a browser; when none is available, says so on stderr with the URL. Whether it opened. */
export async function maybeOpen(ctx: Context, url: string): Promise<boolean> {
  const opened = await openUrl(url, { env: ctx.io.env });
  if (!opened) ctx.out.note(`Could not open a browser; open ${url}`);
  return opened;
}

/** `htmldrop open`. */
export const open: Command = {
  usage: 'open <slug> [--version n] [--raw]',
  summary: 'Open a drop in the browser',
  help: `Opens the drop's viewer page (or with --raw the bare document) in a browser ($BROWSER, open, start or
xdg-open). When none is available it prints the URL.`,
  options: { version: { type: 'string' }, raw: { type: 'boolean' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'open');
    const version = integer(str(values, 'version'), '--version', 1);
    const raw = bool(values, 'raw');
    const found = await ctx.optionalToken();
    let base = raw ? `${ctx.server}/p/${encodeURIComponent(slug)}/raw` : `${ctx.server}/p/${encodeURIComponent(slug)}`;
    if (found !== undefined) {
      // The service's own URL: its public base may differ from the API address (a proxy).
      try {
        const drop = await ctx.anonymous().withToken(found.token).getDrop(slug);
        base = raw ? drop.raw_url : drop.url;
      } catch (error) {
        // Another account's drop is still public: open it by its path.
        if (!(error instanceof HtmlDropError && error.code === 'forbidden')) throw error;
      }
    }
    const url = version === undefined ? base : `${base}?v=${version}`;
    const opened = await openUrl(url, { env: ctx.io.env });
    ctx.out.result({ url, opened }, () => (opened ? `Opened ${url}` : url));
  },
};
