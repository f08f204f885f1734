/** A harness listening on a loopback port, for tests that drive it with a real browser or real clients. */
import { createHarness, type Harness, type HarnessOptions } from './helpers.js';
import { type OidcTestProvider, startOidcProvider } from './oidc-provider.js';
import { freePort } from './process.js';

/**
 * The service on 127.0.0.1 at a free port, with `http://<hostName>:<port>` as its base URL (Origin checks match it).
 * `localhost` makes the service and the drops' own hosts (`<label>.localhost`) distinct sites in a browser.
 */
export async function serveOnLoopback(
  options: HarnessOptions & { readonly hostName?: '127.0.0.1' | 'localhost' } = {},
): Promise<{ h: Harness; base: string }> {
  const port = await freePort();
  const base = `http://${options.hostName ?? '127.0.0.1'}:${port}`;
  const h = await createHarness({ ...options, env: { HTMLDROP_BASE_URL: base, ...options.env } });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, base };
}

/**
 * The service on loopback signing people in through a real OpenID Connect provider (oidc-provider): the provider at
 * `localhost`, the service at `127.0.0.1`, two different sites as in production, so the SameSite cookies of /verify
 * are exercised across the provider's cross-site redirect.
 */
export async function serveWithOidcProvider(): Promise<{ h: Harness; base: string; op: OidcTestProvider }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const op = await startOidcProvider({ redirectUris: [`${base}/verify/callback`], host: 'localhost' });
  const h = await createHarness({
    env: {
      HTMLDROP_BASE_URL: base,
      HTMLDROP_AUTH_PROVIDER: 'oidc',
      HTMLDROP_OIDC_ISSUER: op.issuer,
      HTMLDROP_OIDC_CLIENT_ID: op.clientId,
      HTMLDROP_OIDC_CLIENT_SECRET: op.clientSecret,
    },
  });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, base, op };
}
