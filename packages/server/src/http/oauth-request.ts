/**
 * An authorization request of an MCP client as the service checks it before the MCP SDK's authorize handler runs
 * (docs/api.md, "Remote MCP and OAuth"), and as it waits for the human, signed into the approval page's URL. Nothing
 * here loads the SDK: the approval page (routes/oauth-approval.ts) and sign-in use it at start-up, while the SDK's
 * handlers are loaded on the first OAuth request (routes/oauth.ts).
 */
import { matchRedirectUri } from '../domain/oauth.js';
import type { OAuthClient } from '../domain/types.js';
import { MCP_PATH } from './bearer-challenge.js';

/** The OAuth endpoints. */
export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
} as const;

/** An authorization request waiting for the human, as signed into the approval page's URL. */
export interface AuthorizationRequest {
  /** client_id */
  readonly c: string;
  /** The index of the redirect URI among the client's (domain/oauth.ts, `matchRedirectUri`). */
  readonly i: number;
  /** For a loopback redirect URI, the port the client listens on, when it is not the registered one. */
  readonly p?: string;
  /** PKCE S256 challenge. */
  readonly ch: string;
  /** The client's state, echoed on the redirect. */
  readonly s?: string;
  /** The resource indicator (RFC 8707) the client named: the MCP endpoint or the service. */
  readonly r?: string;
}

export const AUTHORIZATION_PURPOSE = 'oauth-request';
/** The human's approval page (http/routes/oauth-approval.ts), under /verify so that its session cookie applies. */
export const OAUTH_APPROVAL_PATH = '/verify/oauth';
/** A PKCE S256 challenge: base64url of a SHA-256, 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** `state`: up to 500 printable ASCII characters (RFC 6749 appendix A.5), so the request fits a cookie. */
const STATE = /^[\x20-\x7e]{1,500}$/;
/** The parameters of an authorization request that must each be given at most once. */
const SINGLE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
  'scope',
] as const;

/** Why `resource` (RFC 8707) is not one a client may name here: the MCP endpoint or the whole service. */
export function resourceProblem(baseUrl: string, resource: string): string | undefined {
  const named = resource.replace(/\/$/, '');
  return named === baseUrl || named === `${baseUrl}${MCP_PATH}`
    ? undefined
    : `resource must be ${baseUrl}${MCP_PATH} or ${baseUrl}`;
}

/** A refusal of an authorization request, answered to the browser directly (never by a redirect). */
export interface AuthorizationProblem {
  readonly error: string;
  readonly description: string;
}

const problem = (error: string, description: string): AuthorizationProblem => ({ error, description });

/**
 * Everything the SDK's authorize handler checks, and what it leaves open, checked before it runs: its own failures
 * after the redirect URI is known would redirect the browser there, and since anyone may register a client, that
 * would make /oauth/authorize an open redirector (RFC 9700 section 4.11.2). So every refusal here is a 400 to the
 * browser. Undefined when the SDK may take the request.
 */
export function authorizationProblem(
  baseUrl: string,
  query: Readonly<Record<string, unknown>>,
  client: OAuthClient | undefined,
): AuthorizationProblem | undefined {
  for (const name of SINGLE) {
    const value = query[name];
    if (value !== undefined && typeof value !== 'string') return problem('invalid_request', `${name} is given twice`);
  }
  const field = (name: (typeof SINGLE)[number]) => query[name] as string | undefined;
  if (client === undefined) return problem('invalid_client', 'Unknown client_id');
  const redirectUri = field('redirect_uri');
  if (
    redirectUri === undefined ? client.redirectUris.length !== 1 : !matchRedirectUri(client.redirectUris, redirectUri)
  ) {
    return problem(
      'invalid_request',
      redirectUri === undefined ? 'redirect_uri is required' : 'Unregistered redirect_uri',
    );
  }
  if (field('response_type') !== 'code') return problem('unsupported_response_type', 'response_type must be code');
  if (field('code_challenge_method') !== 'S256')
    return problem('invalid_request', 'code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(field('code_challenge') ?? '')) {
    return problem('invalid_request', 'code_challenge must be an S256 challenge (43 base64url characters)');
  }
  const state = field('state');
  if (state !== undefined && !STATE.test(state)) {
    return problem('invalid_request', 'state must be 1 to 500 printable ASCII characters');
  }
  const resource = field('resource');
  if (resource !== undefined && resourceProblem(baseUrl, resource) !== undefined) {
    return problem('invalid_target', resourceProblem(baseUrl, resource) ?? '');
  }
  return undefined;
}
