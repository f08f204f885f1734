/**
 * The service as the MCP SDK's OAuth server provider (docs/api.md, "Remote MCP and OAuth"): the SDK's handlers do
 * the protocol (parameter validation, PKCE S256 verification, error shapes); this adapter answers them from the
 * domain (domain/oauth.ts). An authorization request goes on to the human's approval page with its parameters
 * signed into the URL (`AuthorizationRequest`): nothing is stored until the human approves.
 */
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { CustomOAuthError, InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
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
import { refreshTokens, revokeClientToken } from '../domain/oauth-tokens.js';
import type { OAuthClient } from '../domain/types.js';
import type { Signer } from '../keys/signer.js';
import {
  AUTHORIZATION_PURPOSE,
  type AuthorizationRequest,
  OAUTH_APPROVAL_PATH,
  resourceProblem,
} from './oauth-request.js';

/**
 * The SDK's view of one of our clients: its registered metadata, public (no secret), without the `scope` that clients
 * registered before scopes were dropped may still carry (the service has none to check).
 */
function asSdkClient(client: OAuthClient): OAuthClientInformationFull {
  const { scope: _unsupported, ...metadata } = client.metadata;
  return metadata as unknown as OAuthClientInformationFull;
}

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
        return exchangeCode(oauth, owner, code, sent);
      }),
    // Scopes are not a thing here (a token is its account's); a resource, when sent, must still be ours.
    exchangeRefreshToken: (client, refreshToken, _scopes, resource) =>
      refusing(async () => {
        checkResource(deps.baseUrl, resource);
        return refreshTokens(oauth, client.client_id, refreshToken);
      }),
    revokeToken: (client, request) => refusing(() => revokeClientToken(oauth, client.client_id, request.token)),
    async verifyAccessToken() {
      // The service checks bearer tokens itself (domain/accounts.ts); the SDK's bearer middleware is not used.
      throw new CustomOAuthError('invalid_token', 'not used');
    },
  };
}
