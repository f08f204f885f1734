import type { IdentityConfig } from '../config.js';
import { createGitHubProvider } from './github.js';
import { createLocalProvider } from './local.js';
import { createOidcProvider } from './oidc.js';
import type { IdentityProvider } from './provider.js';

/** The configured provider (HTMLDROP_AUTH_PROVIDER). */
export function createIdentityProvider(config: IdentityConfig): IdentityProvider {
  switch (config.provider) {
    case 'local':
      return createLocalProvider();
    case 'github':
      return createGitHubProvider(config);
    case 'oidc':
      return createOidcProvider(config);
  }
}

export type { IdentityProvider } from './provider.js';
export { SignInError } from './provider.js';
