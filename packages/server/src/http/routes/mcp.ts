/**
 * The remote MCP endpoint, `{base_url}/mcp` (docs/api.md, "Remote MCP and OAuth"): MCP's Streamable HTTP transport
 * from the official SDK, serving the same tool definitions as the stdio program (@htmldrop/mcp's `createMcpServer`).
 *
 * - Authenticated like every owner route (`auth: 'owner'`: a bearer `hd_` token, from OAuth or the device flow); a
 *   401 names the resource's metadata (bearer-challenge.ts), which is how an MCP client finds OAuth.
 * - Stateless: each POST gets its own MCP server and transport and no `Mcp-Session-Id`, so any instance answers any
 *   request and nothing is kept between them. GET (a server-to-client stream) and DELETE (ending a session) are
 *   answered 405, as the transport allows for a server without sessions.
 * - A tool call is the SDK's call of the service's own HTTP API, injected into this app in process (no socket, no
 *   base URL round trip): the same validation, limits, idempotency and answers as for any client.
 * - MCP_CORS is open (`*`): the endpoint takes no cookies, only the bearer token, so browser-based clients may call it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { MCP_CORS, MCP_PATH } from '../bearer-challenge.js';
import { documentBodyLimit } from '../json-body.js';
import { loadOnce } from '../load-once.js';
import type { Injector } from '../mcp-exchange.js';
import type { TypedApp } from '../typed-app.js';

/**
 * JSON-RPC messages per POST: a batch (protocol versions before 2025-06-18) becomes that many concurrent API calls
 * on one connection, so it is bounded.
 */
const MAX_BATCH = 10;

export interface McpRouteDeps {
  readonly config: Config;
  readonly inject: Injector;
}

export async function mcpRoutes(app: TypedApp, { config, inject }: McpRouteDeps): Promise<void> {
  const hide = { hide: true };
  // The MCP SDK and the tools load on the first POST, not at start-up (mcp-exchange.ts).
  const exchange = loadOnce(async () =>
    (await import('../mcp-exchange.js')).createMcpExchange({ baseUrl: config.baseUrl, inject }),
  );

  /** POST /mcp: one JSON-RPC message (or batch), answered as the transport chooses (JSON or an SSE stream). */
  async function post(request: FastifyRequest, reply: FastifyReply) {
    if (Array.isArray(request.body) && request.body.length > MAX_BATCH) {
      const message = `A batch has at most ${MAX_BATCH} messages.`;
      return reply
        .code(400)
        .headers(MCP_CORS)
        .send({ jsonrpc: '2.0', error: { code: -32600, message }, id: null });
    }
    return (await exchange())(request, reply);
  }

  async function noSessions(_request: FastifyRequest, reply: FastifyReply) {
    return reply
      .code(405)
      .headers(MCP_CORS)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this server keeps no sessions.' },
        id: null,
      });
  }

  app.post(MCP_PATH, { schema: hide, bodyLimit: documentBodyLimit(config.limits), config: { auth: 'owner' } }, post);
  app.get(MCP_PATH, { schema: hide, config: { auth: 'owner' } }, noSessions);
  app.delete(MCP_PATH, { schema: hide, config: { auth: 'owner' } }, noSessions);
  app.options(MCP_PATH, { schema: hide }, async (_request, reply) => reply.code(204).headers(MCP_CORS).send());
}
