/**
 * The MCP SDK's OAuth handlers (authorize, token, registration, revocation) in one small Express app, over the service's provider
 * (oauth-provider.ts). Loaded on the first OAuth request (routes/oauth.ts), which hands it the raw request with the
 * body already read and parsed: the handlers' own body parsers find the request read and leave the body as given.
 */
import type http from 'node:http';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import express from 'express';
import { createOAuthProvider, type OAuthProviderDeps } from './oauth-provider.js';
import { OAUTH_PATHS } from './oauth-request.js';

/** Answers one request: Node's request and response, as Fastify hands them over after `reply.hijack()`. */
export type OAuthHandlers = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/** The SDK's handlers as one Express app; its failures answer in OAuth's shape, never a stack trace. */
export function createOAuthHandlers(deps: OAuthProviderDeps): OAuthHandlers {
  const provider = createOAuthProvider(deps);
  const handlers = express();
  handlers.disable('x-powered-by');
  handlers.use(OAUTH_PATHS.authorize, authorizationHandler({ provider, rateLimit: false }));
  handlers.use(OAUTH_PATHS.token, tokenHandler({ provider, rateLimit: false }));
  handlers.use(OAUTH_PATHS.revoke, revocationHandler({ provider, rateLimit: false }));
  handlers.use(
    OAUTH_PATHS.register,
    clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: false }),
  );
  handlers.use((_error: unknown, _request: express.Request, response: express.Response, _next: unknown) => {
    response.status(400).setHeader('cache-control', 'no-store');
    response.json({ error: 'invalid_request', error_description: 'The request is malformed.' });
  });
  return (request, response) => handlers(request as express.Request, response as express.Response);
}
