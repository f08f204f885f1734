/**
 * GitHub OAuth (web application flow) with the read-only `read:user` scope. Reads only the public login and the
 * numeric id (the stable subject: logins can be renamed). Endpoints are configurable for a loopback stand-in.
 */
import type { Identity } from '../domain/types.js';
import { type IdentityProvider, SignInError, type SignInParams } from './provider.js';

export interface GitHubOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly webUrl: string;
  readonly apiUrl: string;
}

export function createGitHubProvider(options: GitHubOptions, fetchImpl: typeof fetch = fetch): IdentityProvider {
  return {
    name: 'github',
    displayName: 'GitHub',
    async authorizationUrl(params: SignInParams) {
      const url = new URL(`${options.webUrl}/login/oauth/authorize`);
      url.searchParams.set('client_id', options.clientId);
      url.searchParams.set('redirect_uri', params.redirectUri);
      url.searchParams.set('scope', 'read:user');
      url.searchParams.set('state', params.state);
      url.searchParams.set('allow_signup', 'false');
      return url.toString();
    },
    async complete(callback, form, params): Promise<Identity> {
      try {
        return await completeSignIn(callback, form, params);
      } catch (error) {
        if (error instanceof SignInError) throw error;
        throw new SignInError(`GitHub could not be reached (${(error as Error).message}).`, { cause: error });
      }
    },
  };

  async function completeSignIn(
    callback: URL,
    _form: Readonly<Record<string, string>> | undefined,
    params: SignInParams,
  ): Promise<Identity> {
    if (callback.searchParams.get('state') !== params.state)
      throw new SignInError('The sign-in answer does not match this browser; start again.');
    const denied = callback.searchParams.get('error');
    if (denied !== null) throw new SignInError(`GitHub did not sign you in (${denied}).`);
    const code = callback.searchParams.get('code');
    if (code === null) throw new SignInError('GitHub sent no authorization code.');
    const exchange = await fetchImpl(`${options.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: options.clientId,
        client_secret: options.clientSecret,
        code,
        redirect_uri: params.redirectUri,
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const grant = (await exchange.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
    if (!exchange.ok || typeof grant.access_token !== 'string') {
      throw new SignInError(`GitHub refused the sign-in${typeof grant.error === 'string' ? ` (${grant.error})` : ''}.`);
    }
    const userResponse = await fetchImpl(`${options.apiUrl}/user`, {
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${grant.access_token}`,
        'user-agent': 'htmldrop',
      },
      signal: AbortSignal.timeout(10_000),
    });
    const user = (await userResponse.json().catch(() => ({}))) as { id?: unknown; login?: unknown };
    if (
      !userResponse.ok ||
      (typeof user.id !== 'number' && typeof user.id !== 'string') ||
      typeof user.login !== 'string'
    ) {
      throw new SignInError('GitHub did not return the user.');
    }
    return { provider: 'github', subject: String(user.id), login: user.login };
  }
}
