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
import { HtmlDropClient } from '@htmldrop/client';
import { createHostedToolContext, createMcpServer, createUpsertLock } from '@htmldrop/mcp/tools';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest, InjectOptions } from 'fastify';
import type { Config } from '../../config.js';
import { MCP_CORS, MCP_PATH } from '../bearer-challenge.js';
import { callerOf } from '../caller.js';
import { documentBodyLimit } from '../json-body.js';
import type { TypedApp } from '../typed-app.js';

/** Runs a request through this app in process (Fastify's `inject`). */
export type Injector = (options: InjectOptions) => Promise<{
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly rawPayload: Buffer;
}>;

/** A fetch that answers from the app in process, for the tools' HtmlDropClient; the caller's address is kept. */
function injectFetch(inject: Injector, remoteAddress: string): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const answer = await inject({
      method: (init?.method ?? 'GET') as InjectOptions['method'],
      url: `${url.pathname}${url.search}`,
      headers,
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
      remoteAddress,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of [value].flat()) responseHeaders.append(name, String(one));
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304;
    return new Response(empty ? null : answer.rawPayload, { status: answer.statusCode, headers: responseHeaders });
  };
}

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
  const upsertLock = createUpsertLock();
  const hide = { hide: true };

  /** POST /mcp: one JSON-RPC message (or batch), answered as the transport chooses (JSON or an SSE stream). */
  async function post(request: FastifyRequest, reply: FastifyReply) {
    if (Array.isArray(request.body) && request.body.length > MAX_BATCH) {
      const message = `A batch has at most ${MAX_BATCH} messages.`;
      return reply
        .code(400)
        .headers(MCP_CORS)
        .send({ jsonrpc: '2.0', error: { code: -32600, message }, id: null });
    }
    const token = (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
    const client = new HtmlDropClient({
      server: config.baseUrl,
      token,
      fetch: injectFetch(inject, request.ip),
      maxRetries: 0,
    });
    const caller = callerOf(request).account.id;
    const mcp = createMcpServer(createHostedToolContext({ client, upsertLock, caller }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    for (const [name, value] of Object.entries(MCP_CORS)) reply.raw.setHeader(name, value);
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.on('close', () => {
      transport.close().catch(() => undefined);
      mcp.close().catch(() => undefined);
    });
    try {
      await mcp.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'mcp request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
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
