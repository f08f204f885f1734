/**
 * Any OpenID Connect issuer through openid-client: discovery, authorization code with PKCE (S256) and state, and
 * ID token validation by the library (issuer, audience, signature, expiry, nonce). The subject is namespaced by
 * issuer, so one account per (issuer, sub).
 */
import * as oidc from 'openid-client';
import type { Identity } from '../storage/store.js';
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

export function createOidcProvider(options: OidcOptions): IdentityProvider {
  const issuer = new URL(options.issuer);
  let configuration: Promise<oidc.Configuration> | undefined;
  const configure = () => {
    configuration ??= oidc
      .discovery(
        issuer,
        options.clientId,
        undefined,
        options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(options.clientSecret),
        isLoopbackHttp(issuer) ? { execute: [oidc.allowInsecureRequests] } : {},
      )
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
      const config = await configure();
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
      const config = await configure();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: params.codeVerifier,
          expectedState: params.state,
          expectedNonce: params.state,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch (error) {
        throw new SignInError(`The identity provider did not sign you in (${(error as Error).message}).`);
      }
      if (claims === undefined) throw new SignInError('The identity provider returned no ID token.');
      const login =
        [claims.preferred_username, claims.nickname, claims.email, claims.sub].find(
          (value): value is string => typeof value === 'string' && value !== '',
        ) ?? claims.sub;
      return { provider: 'oidc', subject: `${options.issuer}#${claims.sub}`, login };
    },
  };
}
