/** /api/me and /api/tokens (spec 2.5, 4.4). */
import { Type } from '@sinclair/typebox';
import { revokeOwnToken, withPendingUse } from '../../domain/accounts.js';
import type { RouteContext, TypedApp } from '../app.js';
import { presentToken } from '../present.js';

const OWNER = { auth: 'owner' } as const;

export function registerAccountRoutes(app: TypedApp, ctx: RouteContext): void {
  const { schemas: s } = ctx;
  const errors = { '4XX': { $ref: 'Error#' } };

  app.get(
    '/api/me',
    {
      config: OWNER,
      schema: {
        summary: 'Identity of the caller',
        tags: ['account'],
        response: {
          200: Type.Object({
            user_id: Type.String(),
            login: Type.String(),
            provider: Type.String(),
            created_at: Type.Integer(),
            drop_count: Type.Integer(),
            token: s.Token,
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const caller = ctx.callerOf(request);
      // Re-read the account: drop_count must reflect writes made since authentication.
      const account = (await ctx.store.findAccount(caller.account.id)) ?? caller.account;
      return {
        user_id: account.id,
        login: account.login,
        provider: account.provider,
        created_at: account.createdAt,
        drop_count: account.dropCount,
        token: presentToken(withPendingUse(caller.token, ctx.tokenUses)),
      };
    },
  );

  app.get(
    '/api/tokens',
    {
      config: OWNER,
      schema: {
        summary: "The caller's active tokens",
        tags: ['account'],
        response: {
          200: Type.Array(Type.Composite([s.Token, Type.Object({ current: Type.Boolean() })])),
          ...errors,
        },
      },
    },
    async (request) => {
      const caller = ctx.callerOf(request);
      const tokens = await ctx.store.listActiveTokens(caller.account.id);
      return tokens.map((token) => ({
        ...presentToken(withPendingUse(token, ctx.tokenUses)),
        current: token.id === caller.token.id,
      }));
    },
  );

  app.delete(
    '/api/tokens/:id',
    {
      config: OWNER,
      schema: {
        summary: 'Revoke one of your tokens (it stops working at once)',
        tags: ['account'],
        params: s.TokenParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await revokeOwnToken(ctx.store, ctx.clock, ctx.callerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
