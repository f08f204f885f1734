/**
 * OAuth for remote MCP clients (docs/api.md, "Remote MCP and OAuth"): the metadata documents (RFC 9728 protected
 * resource, RFC 8414 authorization server), and the MCP SDK's own handlers for authorization (code with PKCE S256),
 * token exchange and refresh, dynamic client registration (RFC 7591) and revocation (RFC 7009), mounted in a small
 * Express app (oauth-handlers.ts, loaded on the first request that needs it) that this plugin hands the raw request
 * to, its body read within the cap. Before a request reaches them the service checks what the SDK leaves open: every
 * parameter of an authorization request (so that no refusal becomes a redirect; oauth-request.ts,
 * `authorizationProblem`) and a per-address budget on the unauthenticated endpoints. The human's approval is
 * /verify/oauth (oauth-approval.ts).
 */

import { isUtf8 } from 'node:buffer';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { MAX_CLIENT_ID_CHARS, type OAuthDeps, throttleOAuth } from '../../domain/oauth.js';
import { ApiError } from '../../errors.js';
import type { Signer } from '../../keys/signer.js';
import { MCP_PATH, RESOURCE_METADATA_PATH, resourceOf } from '../bearer-challenge.js';
import { loadOnce } from '../load-once.js';
import { authorizationProblem, OAUTH_PATHS } from '../oauth-request.js';
import type { TypedApp } from '../typed-app.js';

/** The OAuth endpoints that take a body, each answered by the SDK's handlers under its own per-address budget. */
const BUDGETS = {
  [OAUTH_PATHS.token]: 'token',
  [OAUTH_PATHS.register]: 'register',
  [OAUTH_PATHS.revoke]: 'revoke',
} as const;
export const BODY_ENDPOINTS = Object.keys(BUDGETS) as Array<keyof typeof BUDGETS>;

/** RFC 8414 section 2: what this authorization server supports, at /.well-known/oauth-authorization-server. */
export function authorizationServerMetadata(baseUrl: string): OAuthMetadata {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${baseUrl}${OAUTH_PATHS.token}`,
    registration_endpoint: `${baseUrl}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${baseUrl}${OAUTH_PATHS.revoke}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    service_documentation: `${baseUrl}/llms.txt`,
    authorization_response_iss_parameter_supported: true,
  };
}

/** RFC 9728 section 2: the protected resource at `path` (the MCP endpoint, or the service). */
function resourceMetadata(baseUrl: string, path: string): OAuthProtectedResourceMetadata {
  return {
    resource: resourceOf(baseUrl, path).resource,
    authorization_servers: [baseUrl],
    bearer_methods_supported: ['header'],
    resource_name: 'htmldrop',
    resource_documentation: `${baseUrl}/llms.txt`,
  };
}

/** An OAuth error answer (RFC 6749 section 5.2) from this plugin's own checks. */
function oauthError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('access-control-allow-origin', '*')
    .type('application/json; charset=utf-8')
    .send({ error, error_description: description });
}

const MALFORMED = Symbol('malformed');

/** Whether a request announces a body (RFC 9112 section 6.3): a transfer coding, or a length above zero. */
const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

/**
 * The body as the SDK's handlers would have parsed it (Express's `urlencoded({ extended: false })` for the token
 * endpoint, `json()` for registration): form fields (a repeated one as an array) or a JSON object or array, by the
 * declared type; undefined for another type or no body, which the handlers refuse in OAuth's terms.
 */
function bodyForHandlers(request: FastifyRequest): unknown {
  const bytes = request.body;
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) return undefined;
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (!isUtf8(bytes)) return MALFORMED;
  const text = bytes.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') {
    const fields = new Map<string, string | string[]>();
    for (const [name, value] of new URLSearchParams(text)) {
      const previous = fields.get(name);
      fields.set(name, previous === undefined ? value : [previous, value].flat());
    }
    // fromEntries defines own properties: a `__proto__` field stays a field.
    return Object.fromEntries(fields);
  }
  if (type === 'application/json') {
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'object' && parsed !== null ? parsed : MALFORMED;
    } catch {
      return MALFORMED;
    }
  }
  return undefined;
}

export interface OAuthRouteDeps {
  readonly config: Config;
  readonly oauth: OAuthDeps;
  readonly signer: Signer;
}

export async function oauthRoutes(app: TypedApp, { config, oauth, signer }: OAuthRouteDeps): Promise<void> {
  const { baseUrl } = config;
  // Express and the SDK's handlers load on the first request that needs them, not at start-up.
  const handlers = loadOnce(async () =>
    (await import('../oauth-handlers.js')).createOAuthHandlers({ oauth, signer, baseUrl }),
  );
  const metadata = (document: object) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300').send(document);
  const hide = { schema: { hide: true } };
  const documents: Array<[string, object]> = [
    ['/.well-known/oauth-authorization-server', authorizationServerMetadata(baseUrl)],
    [RESOURCE_METADATA_PATH, resourceMetadata(baseUrl, '/')],
    [`${RESOURCE_METADATA_PATH}${MCP_PATH}`, resourceMetadata(baseUrl, MCP_PATH)],
  ];
  for (const [path, document] of documents) {
    app.get(path, hide, metadata(document));
    // A browser-based client's preflight (the SDK sends MCP-Protocol-Version with its discovery requests).
    app.options(path, hide, async (_request, reply) =>
      reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-headers', 'mcp-protocol-version')
        .send(),
    );
  }

  app.register(async (scope) => {
    // Fastify reads every body here, within the small-body cap (docs/api.md 8): a declared length over it is refused
    // before a byte is read, a chunked body is cut at the cap and the connection closed. The SDK's handlers would read
    // it themselves, and their body parser reads a refused body to its end (however long) before answering; they
    // get it parsed instead (`bodyForHandlers`), and find the request read.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const handOver = async (request: FastifyRequest, reply: FastifyReply) => {
      const body = bodyForHandlers(request);
      if (body === MALFORMED) return oauthError(reply, 400, 'invalid_request', 'The request body is malformed.');
      (request.raw as { body?: unknown }).body = body;
      const handle = await handlers();
      reply.hijack();
      handle(request.raw, reply.raw);
    };
    scope.get(OAUTH_PATHS.authorize, hide, async (request, reply) => {
      // Fastify reads no body of a GET, and the SDK's handler would read one (urlencoded) to its end: a GET here
      // takes none, refused before a byte of it is read (docs/api.md 8), and the connection is closed.
      if (hasBody(request)) {
        reply.header('connection', 'close');
        throw new ApiError('body_too_large', {
          message: 'An authorization request is a GET without a body.',
          details: { max_bytes: 0 },
        });
      }
      const query = request.query as Record<string, unknown>;
      const clientId = query.client_id;
      const client =
        typeof clientId === 'string' && clientId.length <= MAX_CLIENT_ID_CHARS
          ? await oauth.store.findOAuthClient(clientId)
          : undefined;
      const refused = authorizationProblem(baseUrl, query, client);
      if (refused !== undefined) return oauthError(reply, 400, refused.error, refused.description);
      return handOver(request, reply);
    });
    for (const path of BODY_ENDPOINTS) {
      const endpoint = BUDGETS[path];
      scope.route({
        method: ['POST', 'OPTIONS'],
        url: path,
        ...hide,
        handler: async (request, reply) => {
          if (request.method === 'POST') {
            const wait = await throttleOAuth(oauth, endpoint, request.ip);
            if (wait !== undefined) {
              reply.header('retry-after', String(wait));
              return oauthError(reply, 429, 'too_many_requests', `Too many requests: retry in ${wait} s.`);
            }
          }
          return handOver(request, reply);
        },
      });
    }
  });
}
