/**
 * Any OpenID Connect issuer through openid-client: discovery, authorization code with PKCE (S256) and state, and
 * ID token validation by the library (issuer, audience, signature, expiry, nonce). The subject is namespaced by
 * issuer, so one account per (issuer, sub).
 */
import type * as OidcClient from 'openid-client';
import type { Identity } from '../domain/types.js';
import { type IdentityProvider, SignInError, type SignInParams } from './provider.js';

export interface OidcOptions {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  readonly scopes: string;
}

/** Plain-HTTP issuers are allowed only on loopback (tests, local identity providers). */
function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** The display login: the first non-empty of preferred_username, nickname, email. */
function loginOf(claims: Readonly<Record<string, unknown>>): string | undefined {
  return [claims.preferred_username, claims.nickname, claims.email].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
}

/**
 * The email the issuer vouches for: `email` with `email_verified` exactly true (OpenID Connect Core 5.1), lowercase;
 * none otherwise, so an address a person merely typed into their profile never matches a drop's list.
 */
function verifiedEmail(claims: Readonly<Record<string, unknown>>): { email?: string } {
  const { email, email_verified: verified } = claims;
  if (typeof email !== 'string' || verified !== true || !/^[^@\s]+@[^@\s]+$/.test(email)) return {};
  return { email: email.toLowerCase() };
}

export function createOidcProvider(options: OidcOptions): IdentityProvider {
  const issuer = new URL(options.issuer);
  let configuration: Promise<{ oidc: typeof OidcClient; config: OidcClient.Configuration }> | undefined;
  // openid-client is loaded with the first sign-in, not at start-up (docs/architecture.md, "Process lifecycle").
  const configure = () => {
    configuration ??= import('openid-client')
      .then(async (oidc) => {
        const config = await oidc.discovery(
          issuer,
          options.clientId,
          undefined,
          options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(options.clientSecret),
          isLoopbackHttp(issuer) ? { execute: [oidc.allowInsecureRequests] } : {},
        );
        return { oidc, config };
      })
      .catch((error: unknown) => {
        configuration = undefined; // retry discovery on the next sign-in
        throw new SignInError(`The identity provider is unreachable (${(error as Error).message}).`);
      });
    return configuration;
  };

  return {
    name: 'oidc',
    displayName: issuer.host,
    async authorizationUrl(params: SignInParams) {
      const { oidc, config } = await configure();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: params.redirectUri,
        scope: options.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(params.codeVerifier),
        code_challenge_method: 'S256',
        state: params.state,
        nonce: params.state,
      });
      return url.toString();
    },
    async complete(callback, _form, params): Promise<Identity> {
      const { oidc, config } = await configure();
      // The token request must repeat the authorization request's redirect_uri exactly, and openid-client takes
      // it from the URL it is given: rebuild that from params.redirectUri (the request URL the route sees has
      // lost any path prefix of the base URL), keeping only the provider's answer, the query.
      const current = new URL(params.redirectUri);
      current.search = callback.search;
      let claims: Readonly<Record<string, unknown>> & { readonly sub: string };
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: params.codeVerifier,
          expectedState: params.state,
          expectedNonce: params.state,
          idTokenExpected: true,
        });
        const idToken = tokens.claims();
        if (idToken === undefined) throw new SignInError('The identity provider returned no ID token.');
        claims = idToken;
        // With the code flow, the claims of the profile and email scopes come from the UserInfo endpoint, not
        // the ID token (OpenID Connect Core 5.4); ask it when the ID token names no login, or no email while the
        // email scope was asked for (a drop's email rules need it: docs/operating.md, "Who can see a drop").
        const wantsEmail = /(^|\s)email(\s|$)/.test(options.scopes) && typeof idToken.email !== 'string';
        if ((loginOf(idToken) === undefined || wantsEmail) && config.serverMetadata().userinfo_endpoint !== undefined) {
          claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)), sub: idToken.sub };
        }
      } catch (error) {
        if (error instanceof SignInError) throw error;
        // openid-client's message is generic ("invalid response encountered"); the reason is in its cause.
        const cause = (error as Error).cause;
        const reason =
          cause instanceof Error ? `${(error as Error).message}: ${cause.message}` : (error as Error).message;
        throw new SignInError(`The identity provider did not sign you in (${reason}).`, { cause: error });
      }
      const login = loginOf(claims) ?? claims.sub;
      return { provider: 'oidc', subject: `${options.issuer}#${claims.sub}`, login, ...verifiedEmail(claims) };
    },
  };
}
