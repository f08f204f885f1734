/**
 * The service as the MCP SDK's OAuth server provider (docs/api.md, "Remote MCP and OAuth"): the SDK's handlers do
 * the protocol (parameter validation, PKCE S256 verification, error shapes); this adapter answers them from the
 * domain (domain/oauth.ts). An authorization request goes on to the human's approval page with its parameters
 * signed into the URL (`AuthorizationRequest`): nothing is stored until the human approves.
 */
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  CustomOAuthError,
  InvalidTargetError,
  UnsupportedGrantTypeError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Response } from 'express';
import {
  AUTHORIZATION_TTL_MS,
  exchangeCode,
  liveCode,
  MAX_CLIENT_ID_CHARS,
  matchRedirectUri,
  type OAuthDeps,
  OAuthRefusal,
  registerClient,
} from '../domain/oauth.js';
import type { OAuthClient } from '../domain/types.js';
import type { Signer } from '../keys/signer.js';
import { MCP_PATH } from './bearer-challenge.js';

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

/** The SDK's view of one of our clients: its registered metadata, public (no secret). */
const asSdkClient = (client: OAuthClient) => client.metadata as unknown as OAuthClientInformationFull;

/** A domain refusal as the SDK's error, which its handlers turn into the RFC's answer. */
function asOAuthError(error: unknown): unknown {
  return error instanceof OAuthRefusal ? new CustomOAuthError(error.error, error.message) : error;
}

async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asOAuthError(error);
  }
}

/** Why `resource` (RFC 8707) is not one a client may name here: the MCP endpoint or the whole service. */
function resourceProblem(baseUrl: string, resource: string): string | undefined {
  const named = resource.replace(/\/$/, '');
  return named === baseUrl || named === `${baseUrl}${MCP_PATH}`
    ? undefined
    : `resource must be ${baseUrl}${MCP_PATH} or ${baseUrl}`;
}

/** The resource as stored with a code (without a trailing slash); refused as invalid_target when not ours. */
function checkResource(baseUrl: string, resource: URL | undefined): string | undefined {
  if (resource === undefined) return undefined;
  const refused = resourceProblem(baseUrl, resource.href);
  if (refused !== undefined) throw new InvalidTargetError(refused);
  return resource.href.replace(/\/$/, '');
}

function clientsStore(deps: OAuthDeps): OAuthRegisteredClientsStore {
  return {
    async getClient(clientId) {
      if (clientId.length > MAX_CLIENT_ID_CHARS) return undefined;
      const client = await deps.store.findOAuthClient(clientId);
      return client === undefined ? undefined : asSdkClient(client);
    },
    registerClient: (info) =>
      refusing(async () => {
        const client = await registerClient(deps, {
          redirectUris: info.redirect_uris,
          clientName: info.client_name,
          grantTypes: info.grant_types,
          responseTypes: info.response_types,
          scope: info.scope,
          softwareId: info.software_id,
          softwareVersion: info.software_version,
        });
        return asSdkClient(client);
      }),
  };
}

export interface OAuthProviderDeps {
  readonly oauth: OAuthDeps;
  readonly signer: Signer;
  readonly baseUrl: string;
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

/** The signed request for the approval page; the request passed `authorizationProblem`. */
function signRequest(deps: OAuthProviderDeps, client: OAuthClientInformationFull, params: AuthorizationParams) {
  const match = matchRedirectUri(client.redirect_uris, params.redirectUri);
  if (match === undefined) return undefined;
  const request: AuthorizationRequest = {
    c: client.client_id,
    i: match.index,
    ...(match.port === undefined ? {} : { p: match.port }),
    ch: params.codeChallenge,
    ...(params.state === undefined ? {} : { s: params.state }),
    ...(params.resource === undefined ? {} : { r: checkResource(deps.baseUrl, params.resource) }),
  };
  return deps.signer.sign(AUTHORIZATION_PURPOSE, request, AUTHORIZATION_TTL_MS);
}

export function createOAuthProvider(deps: OAuthProviderDeps): OAuthServerProvider {
  const { oauth } = deps;
  return {
    clientsStore: clientsStore(oauth),
    async authorize(client, params, res: Response) {
      const signed = signRequest(deps, client, params);
      res.setHeader('cache-control', 'no-store');
      // Unreachable after authorizationProblem; answered here, not thrown, since a throw would redirect.
      if (signed === undefined)
        res.status(400).json({ error: 'invalid_request', error_description: 'Unregistered redirect_uri' });
      else res.redirect(303, `${OAUTH_APPROVAL_PATH}?request=${encodeURIComponent(signed)}`);
    },
    challengeForAuthorizationCode: (client, code) =>
      refusing(async () => (await liveCode(oauth, client.client_id, code)).codeChallenge),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, resource) =>
      refusing(async () => {
        const owner = { id: client.client_id, name: client.client_name ?? '' };
        const sent = { redirectUri, resource: checkResource(deps.baseUrl, resource) };
        const token = await exchangeCode(oauth, owner, code, sent);
        return { access_token: token, token_type: 'Bearer' };
      }),
    async exchangeRefreshToken() {
      throw new UnsupportedGrantTypeError('No refresh tokens: an hd_ token lasts until it is revoked.');
    },
    async verifyAccessToken() {
      // The service checks bearer tokens itself (domain/accounts.ts); the SDK's bearer middleware is not used.
      throw new CustomOAuthError('invalid_token', 'not used');
    },
  };
}
