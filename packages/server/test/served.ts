/** A harness listening on a loopback port, for tests that drive it with a real browser or real clients. */
import { createHarness, type Harness, type HarnessOptions } from './helpers.js';
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
