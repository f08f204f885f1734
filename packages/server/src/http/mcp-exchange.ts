/**
 * One exchange of the remote MCP endpoint (docs/api.md, "Remote MCP and OAuth"): a POST to `/mcp` answered by a new
 * MCP server (@htmldrop/mcp's `createMcpServer` over the hosted tool context) and a stateless Streamable HTTP
 * transport from the official SDK. Loaded on the first such POST (routes/mcp.ts), so that the service starts without
 * the SDK and the tools.
 *
 * The SDK's web-standard transport answers a `Request` with a `Response`, which is written to Node's response here:
 * - a client that names `text/event-stream` in Accept gets the SDK's choice (an SSE stream for a request, with
 *   progress notifications); any other client that takes JSON (`application/json`, `*\/*`, no Accept) gets one JSON
 *   answer, as the SDK's JSON response mode gives it (the SDK itself would refuse such a client with 406);
 * - the SDK's `Connection: keep-alive` is not copied: Node decides, so a client that sent `Connection: close` has the
 *   connection closed after the answer.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { HtmlDropClient } from '@htmldrop/client';
import { createHostedToolContext, createMcpServer, createUpsertLock } from '@htmldrop/mcp/tools';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest, InjectOptions } from 'fastify';
import { acceptQuality } from './accept.js';
import { MCP_CORS } from './bearer-challenge.js';
import { callerOf } from './caller.js';

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

/** Headers of the connection, not of the message (RFC 9110 section 7.6.1): never passed on either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length', 'host']);

/** True when the client names the SSE type itself; everyone else who takes JSON is answered with one JSON body. */
function wantsEventStream(accept: string | undefined): boolean {
  return (
    accept !== undefined && /\btext\/event-stream\b/i.test(accept) && acceptQuality(accept, 'text/event-stream') > 0
  );
}

/** The request as the SDK's transport reads it (the body is passed parsed); `accept` as the transport requires it. */
function webRequest(url: string, request: FastifyRequest, accept: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const one of [value].flat()) headers.append(name, one);
  }
  if (accept === undefined) headers.delete('accept');
  else headers.set('accept', accept);
  return new Request(url, { method: request.method, headers });
}

/** Writes the transport's answer to Node's response, streaming an SSE body as it comes. */
function writeAnswer(answer: Response, raw: FastifyReply['raw']): void {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) headers[name] = value;
  });
  raw.writeHead(answer.status, headers);
  if (answer.body === null) {
    raw.end();
    return;
  }
  const body = Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>);
  body.on('error', () => raw.destroy());
  // A client that goes away cancels the stream: the transport drops what it kept for it.
  raw.on('close', () => body.destroy());
  body.pipe(raw);
}

export interface McpExchangeDeps {
  readonly baseUrl: string;
  readonly inject: Injector;
}

/** The handler of `POST /mcp`, after authentication and the batch check (routes/mcp.ts). */
export function createMcpExchange({ baseUrl, inject }: McpExchangeDeps) {
  /** Upserts are serialized per account in this process (the hosted context's lock). */
  const upsertLock = createUpsertLock();
  return async function exchange(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
    const client = new HtmlDropClient({
      server: baseUrl,
      token,
      fetch: injectFetch(inject, request.ip),
      maxRetries: 0,
    });
    const caller = callerOf(request).account.id;
    const mcp = createMcpServer(createHostedToolContext({ client, upsertLock, caller }));
    const accept = request.headers.accept;
    const stream = wantsEventStream(accept);
    const jsonOnly = !stream && acceptQuality(accept, 'application/json') > 0;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: jsonOnly,
    });
    reply.hijack();
    for (const [name, value] of Object.entries(MCP_CORS)) reply.raw.setHeader(name, value);
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.on('close', () => {
      transport.close().catch(() => undefined);
      mcp.close().catch(() => undefined);
    });
    try {
      await mcp.connect(transport);
      // The SDK's transport insists on both types in Accept; a JSON-only client is answered in its JSON mode.
      const given = jsonOnly ? 'application/json, text/event-stream' : accept;
      const answer = await transport.handleRequest(webRequest(`${baseUrl}${request.url}`, request, given), {
        parsedBody: request.body,
      });
      writeAnswer(answer, reply.raw);
    } catch (error) {
      request.log.error({ err: error }, 'mcp request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
  };
}
