/** /api/me and /api/tokens (spec 2.5, 4.4). */
import { Type } from '@sinclair/typebox';
import { type AccountDeps, currentAccount, listTokens, revokeOwnToken, withPendingUse } from '../../domain/accounts.js';
import { callerOf } from '../caller.js';
import { presentToken } from '../present.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';

const OWNER = { auth: 'owner' } as const;

/** What /api/me and /api/tokens use. */
export interface AccountRouteDeps {
  readonly schemas: Schemas;
  readonly accounts: AccountDeps;
}

export async function accountRoutes(app: TypedApp, { schemas: s, accounts }: AccountRouteDeps): Promise<void> {
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
      const caller = callerOf(request);
      const account = await currentAccount(accounts, caller.account);
      return {
        user_id: account.id,
        login: account.login,
        provider: account.provider,
        created_at: account.createdAt,
        drop_count: account.dropCount,
        token: presentToken(withPendingUse(caller.token, accounts.tokenUses)),
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
      const caller = callerOf(request);
      const tokens = await listTokens(accounts, caller.account.id);
      return tokens.map((token) => ({
        ...presentToken(token),
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
      await revokeOwnToken(accounts, callerOf(request).account.id, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
