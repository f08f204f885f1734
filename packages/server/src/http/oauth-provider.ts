/**
 * The service as the MCP SDK's OAuth server provider (docs/api.md, "Remote MCP and OAuth"): the SDK's handlers do
 * the protocol (parameter validation, PKCE S256 verification, error shapes); this adapter answers them from the
 * domain (domain/oauth.ts). An authorization request goes on to the human's approval page with its parameters
 * signed into the URL (`AuthorizationRequest`): nothing is stored until the human approves.
 */
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  CustomOAuthError,
  InvalidRequestError,
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
  type OAuthDeps,
  OAuthRefusal,
  registerClient,
} from '../domain/oauth.js';
import type { OAuthClient } from '../domain/types.js';
import { MCP_PATH } from './bearer-challenge.js';
import type { Signer } from './signed-cookie.js';

/** An authorization request waiting for the human, as signed into the approval page's URL. */
export interface AuthorizationRequest {
  /** client_id */
  readonly c: string;
  /** The index of the redirect URI among the client's (it matched one exactly). */
  readonly i: number;
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
const MAX_STATE_CHARS = 500;
const MAX_CLIENT_ID_CHARS = 64;

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

/** The resource indicators a client may name: the MCP endpoint or the whole service (its tokens work on both). */
function checkResource(baseUrl: string, resource: URL | undefined): string | undefined {
  if (resource === undefined) return undefined;
  const named = resource.href.replace(/\/$/, '');
  if (named !== baseUrl && named !== `${baseUrl}${MCP_PATH}`) {
    throw new InvalidTargetError(`resource must be ${baseUrl}${MCP_PATH} or ${baseUrl}`);
  }
  return named;
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

/** The signed request for the approval page, after the checks the SDK leaves to the provider. */
function signRequest(deps: OAuthProviderDeps, client: OAuthClientInformationFull, params: AuthorizationParams): string {
  if (!S256_CHALLENGE.test(params.codeChallenge)) {
    throw new InvalidRequestError('code_challenge must be an S256 challenge (43 base64url characters)');
  }
  if ((params.state?.length ?? 0) > MAX_STATE_CHARS) {
    throw new InvalidRequestError(`state has at most ${MAX_STATE_CHARS} characters`);
  }
  const resource = checkResource(deps.baseUrl, params.resource);
  const request: AuthorizationRequest = {
    c: client.client_id,
    i: client.redirect_uris.indexOf(params.redirectUri),
    ch: params.codeChallenge,
    ...(params.state === undefined ? {} : { s: params.state }),
    ...(resource === undefined ? {} : { r: resource }),
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
      res.redirect(303, `${OAUTH_APPROVAL_PATH}?request=${encodeURIComponent(signed)}`);
    },
    challengeForAuthorizationCode: (client, code) =>
      refusing(async () => (await liveCode(oauth, client.client_id, code)).codeChallenge),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, resource) =>
      refusing(async () => {
        checkResource(deps.baseUrl, resource);
        const owner = { id: client.client_id, name: client.client_name ?? '' };
        const token = await exchangeCode(oauth, owner, code, redirectUri);
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
