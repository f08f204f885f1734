/**
 * The write budget (docs/api.md 8; docs/decisions/0009-write-limits-in-fixed-utc-windows-per-account.md): the one
 * place that counts a request as a write of an account and gives the write back. Every writer goes through it:
 *
 * - a bearer caller on a route configured `write: true` spends a write right after authentication, before its body
 *   is read, so a caller over the limit never makes the service read a document;
 * - a request carrying an `Idempotency-Key` spends it after the key's claim instead (idempotency.ts), so that a
 *   replay is not a write;
 * - a browser form (console actions, the viewer's comment form) spends it with `request.spendWrite()` once the handler
 *   knows the signed-in account, after the form's Origin and CSRF checks.
 *
 * A request whose answer is a 429 of its own (a quota, the comment limit) gives its write back: it changed nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WriteLimiter } from '../domain/write-limit.js';
import { usesIdempotencyKey } from './idempotency.js';

/** Installs the budget on `app`; call before the routes are registered. */
export function installWriteBudget(app: FastifyInstance, writeLimiter: WriteLimiter): void {
  app.decorateRequest('writeRelease', null);
  app.decorateRequest('spendWrite', async function spendWrite(this: FastifyRequest, accountId: string) {
    if (this.writeRelease !== null) throw new Error('a request spends at most one write');
    this.writeRelease = await writeLimiter.consume(accountId);
  });
  // Route-level, so it runs after the app-level authentication hook has set the caller.
  const spendForBearer = async (request: FastifyRequest) => {
    if (request.caller !== null && !usesIdempotencyKey(request)) await request.spendWrite(request.caller.account.id);
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.write === true) route.onRequest = [...[route.onRequest ?? []].flat(), spendForBearer];
  });
  // Every answer passes here, the error handler's and the form pages' included.
  app.addHook('onSend', async (request, reply, payload) => {
    const release = request.writeRelease;
    if (release !== null && reply.statusCode === 429) {
      request.writeRelease = null;
      await release().catch((error: unknown) => request.log.error({ err: error }, 'write not given back'));
    }
    return payload;
  });
}
