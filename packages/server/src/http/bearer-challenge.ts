/**
 * The `WWW-Authenticate` of a 401 from a bearer-protected route (RFC 6750 section 3), naming where the resource's
 * metadata is (RFC 9728 section 5.1), so that an MCP client that has only the URL finds the authorization server
 * (docs/api.md, "Remote MCP and OAuth"). The remote MCP endpoint is its own resource (`{base_url}/mcp`, metadata at
 * the path-suffixed well-known URL); every other owner route belongs to the service's resource (`{base_url}`).
 */

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The protected resource a request path belongs to: the MCP endpoint, or the service. */
export function resourceOf(baseUrl: string, path: string): { resource: string; metadataUrl: string } {
  return isMcpPath(path)
    ? { resource: `${baseUrl}${MCP_PATH}`, metadataUrl: `${baseUrl}${RESOURCE_METADATA_PATH}${MCP_PATH}` }
    : { resource: baseUrl, metadataUrl: `${baseUrl}${RESOURCE_METADATA_PATH}` };
}

export function bearerChallenge(baseUrl: string, path: string, invalidToken: boolean): string {
  const metadata = `resource_metadata="${resourceOf(baseUrl, path).metadataUrl}"`;
  return invalidToken ? `Bearer error="invalid_token", ${metadata}` : `Bearer ${metadata}`;
}

/**
 * CORS of the MCP endpoint, also on its 401: it takes no cookies, only a bearer token, so any origin may call it
 * and read the challenge (browser-based MCP clients).
 */
export const MCP_CORS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, DELETE, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-expose-headers': 'www-authenticate, mcp-session-id, x-request-id',
  'access-control-max-age': '600',
};

export const isMcpPath = (path: string) => path === MCP_PATH || path.startsWith(`${MCP_PATH}?`);
