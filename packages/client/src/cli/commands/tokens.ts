/** Commands of the account's tokens: tokens (list), revoke (docs/api.md section 4.4). */
import { describeTokenSource, signInAgainAdvice } from '../../token-messages.js';
import type { TokenListItem } from '../../types.js';
import { positional, usage } from '../args.js';
import type { Command } from '../context.js';
import { table, when } from '../format.js';

/** `htmldrop tokens`. */
export const tokens: Command = {
  usage: 'tokens',
  summary: 'List your active tokens',
  help:
    'Lists the active tokens of your account; * marks the one in use. EXPIRES is "never" for tokens from ' +
    'htmldrop login or the operator; a token of an OAuth (MCP) client expires within the hour and its client ' +
    'renews it (RENEWS UNTIL); CLIENT names that client.',
  options: {},
  async run(ctx) {
    const { client } = await ctx.authenticated();
    const items: TokenListItem[] = await client.listTokens();
    ctx.out.result(items, () =>
      table([
        ['ID', 'CREATED', 'LAST USED', 'EXPIRES', 'RENEWS UNTIL', 'CLIENT', 'LABEL'],
        ...items.map((t) => [
          `${t.id}${t.current ? ' *' : ''}`,
          when(t.created_at),
          when(t.last_used_at),
          when(t.expires_at),
          t.renewable_until === null ? '-' : when(t.renewable_until),
          t.oauth_client?.id ?? '-',
          t.label ?? '-',
        ]),
      ]),
    );
  },
};

/** `htmldrop revoke`. */
export const revoke: Command = {
  usage: 'revoke <id>',
  summary: 'Revoke one of your tokens',
  help: 'Revokes a token by its 12-hex id (see: htmldrop tokens). It stops working at once.',
  options: {},
  async run(ctx, _values, args) {
    const id = positional(args, 0, 'id', 'revoke');
    if (!/^[0-9a-f]{12}$/.test(id)) throw usage(`revoke: "${id}" is not a token id (12 lowercase hex characters).`);
    const { client, token } = await ctx.authenticated();
    const current = (await client.me()).token.id === id;
    await client.revokeToken(id);
    ctx.out.result({ revoked: id, current }, () =>
      current
        ? `Revoked ${id}: it was the token in use, from ${describeTokenSource(token)}. ${signInAgainAdvice(token)}`
        : `Revoked ${id}.`,
    );
  },
};
