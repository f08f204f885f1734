/**
 * The embedded default: the human types the username to sign in as. Anyone who can reach /verify can claim any
 * name, so it is for one machine only (the server refuses a non-loopback HOST unless HTMLDROP_ALLOW_LOCAL_AUTH=1).
 */
import type { Identity } from '../domain/types.js';
import { type IdentityProvider, SignInError, type SignInParams } from './provider.js';

export const LOCAL_LOGIN_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,38}$/;

export function createLocalProvider(): IdentityProvider {
  return {
    name: 'local',
    displayName: 'a local username',
    async authorizationUrl(params: SignInParams) {
      return `/verify/local?state=${encodeURIComponent(params.state)}`;
    },
    async complete(_callback, form, params): Promise<Identity> {
      if (form === undefined || form.state !== params.state)
        throw new SignInError('The sign-in form expired; start again.');
      const login = (form.username ?? '').trim();
      if (!LOCAL_LOGIN_PATTERN.test(login)) {
        throw new SignInError(
          'Usernames are 1-39 letters, digits, dots, dashes or underscores, starting with a letter or digit.',
        );
      }
      return { provider: 'local', subject: login, login };
    },
  };
}
