/**
 * `htmldrop link` and `htmldrop access`: who can see a drop (docs/api.md, "Who can see a drop"). A recipient link for
 * one person, revoking one, and the access log: who viewed which version, who was refused and why.
 */

import { parseExpires } from '../../expires.js';
import type { AccessEntry, RecipientLink } from '../../types.js';
import { positional, str, usage } from '../args.js';
import type { Command } from '../context.js';
import { table, when } from '../format.js';

/** What a log entry says about who: a link's label, a person's username, the owner, or anonymous. */
function whoText(entry: AccessEntry): string {
  const { kind, name } = entry.who;
  if (kind === 'link') return `link "${name ?? ''}"`;
  if (kind === 'owner') return `you${name === null ? '' : ` (${name})`}`;
  if (kind === 'person') return name ?? 'someone signed in';
  return 'anonymous';
}

function linksText(links: readonly RecipientLink[]): string {
  if (links.length === 0) return 'No links.';
  const state = (l: RecipientLink) =>
    l.revoked_at !== null ? 'revoked' : l.expires_at !== null && l.expires_at <= Date.now() ? 'expired' : 'active';
  return table([
    ['LINK', 'LABEL', 'STATE', 'VIEWS', 'LAST VIEWED'],
    ...links.map((l) => [l.id, l.label, state(l), String(l.views), when(l.last_viewed_at)]),
  ]);
}

function accessText(entries: readonly AccessEntry[]): string {
  if (entries.length === 0) return 'No views or refusals yet.';
  return table([
    ['WHEN', 'OUTCOME', 'WHO', 'VERSION'],
    ...entries.map((e) => [
      when(e.at),
      e.outcome === 'viewed' ? 'viewed' : `refused (${e.reason})`,
      whoText(e),
      e.version === null ? 'latest' : `v${e.version}`,
    ]),
  ]);
}

/** `htmldrop access`. */
export const access: Command = {
  usage: 'access <slug> [--since <ms>]',
  summary: 'Show who opened a drop and who was refused, and its recipient links',
  help: `The drop's recipient links with their views, then its access log, newest first: each view of the viewer
(by you, a signed-in person, a link or anonymous) and each refusal with its reason (sign_in_required, not_on_list,
wrong_passcode, link_revoked, link_expired). Entries are kept 90 days; no address is kept.

  --since <ms>   only entries at or after this time (Unix ms)`,
  options: { since: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'access');
    const sinceText = str(values, 'since');
    const since = sinceText === undefined ? undefined : Number(sinceText);
    if (since !== undefined && (!Number.isSafeInteger(since) || since < 0)) {
      throw usage('--since is a time in Unix ms.');
    }
    const { client } = await ctx.authenticated();
    const [links, entries] = await Promise.all([
      client.listLinks(slug),
      client.access(slug, since === undefined ? {} : { since }),
    ]);
    ctx.out.result({ links, access: entries }, () => `${linksText(links)}\n\n${accessText(entries)}`);
  },
};

/** `htmldrop link`. */
export const link: Command = {
  usage: 'link <slug> <label> [--expires <when>] | link <slug> --revoke <id>',
  summary: 'Make a recipient link for one person (or revoke one)',
  help: `Prints a secret URL that opens the drop for the person it is for, whatever its visibility and passcode, and
counts their views (htmldrop access). The URL is shown this once: send it to them.

  --expires <when>   the link stops working: 30m, 12h, 7d, 2w or an ISO date; at least a minute ahead
  --revoke <id>      revoke the link l_... instead: it stops opening the drop at once`,
  options: { expires: { type: 'string' }, revoke: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'link');
    const revoke = str(values, 'revoke');
    const { client } = await ctx.authenticated();
    if (revoke !== undefined) {
      if (args.length > 1) throw usage('link --revoke takes the slug only.');
      await client.revokeLink(slug, revoke);
      ctx.out.result({ revoked: revoke }, () => `Revoked ${revoke}: it no longer opens ${slug}.`);
      return;
    }
    const label = positional(args, 1, 'label', 'link');
    const expiresText = str(values, 'expires');
    const expires = expiresText === undefined ? undefined : parseExpires(expiresText, Date.now(), '--expires');
    const made = await client.createLink(slug, {
      label,
      ...(typeof expires === 'number' ? { expires_at: expires } : {}),
    });
    ctx.out.result(made, () =>
      [
        `Link for "${made.label}" (${made.id})${made.expires_at === null ? '' : `, until ${when(made.expires_at)}`}`,
        made.url,
      ].join('\n'),
    );
  },
};
