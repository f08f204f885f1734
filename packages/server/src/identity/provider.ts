/**
 * How a human proves who they are on /verify. One interface, one file per provider (local, github, oidc).
 * The verify routes keep `state` and the PKCE verifier in a short-lived signed cookie and hand them back here.
 */
import type { Identity } from '../domain/types.js';

export interface SignInParams {
  /** Opaque value bound to the browser (CSRF protection of the redirect, RFC 6749 10.12). */
  readonly state: string;
  /** PKCE code verifier (RFC 7636); providers that do not use it ignore it. */
  readonly codeVerifier: string;
  /** Where the provider sends the browser back: {base_url}/verify/callback. */
  readonly redirectUri: string;
}

export interface IdentityProvider {
  readonly name: 'local' | 'github' | 'oidc';
  /** For buttons: "Sign in with <displayName>". */
  readonly displayName: string;
  /** Where to send the browser to sign in. */
  authorizationUrl(params: SignInParams): Promise<string>;
  /**
   * Validates the provider's answer (the callback URL's query, or the local form) and returns the identity.
   * Throws SignInError with a message safe to show.
   */
  complete(callback: URL, form: Readonly<Record<string, string>> | undefined, params: SignInParams): Promise<Identity>;
}

export class SignInError extends Error {
  override readonly name = 'SignInError';
}
