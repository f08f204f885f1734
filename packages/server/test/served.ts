/** A harness listening on a loopback port, for tests that drive it with a real browser or real clients. */
import { createHarness, type Harness, type HarnessOptions } from './helpers.js';
import { freePort } from './process.js';

/** The service on `http://127.0.0.1:<free port>`, with that address as its base URL (Origin checks match it). */
export async function serveOnLoopback(options: HarnessOptions = {}): Promise<{ h: Harness; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const h = await createHarness({ ...options, env: { HTMLDROP_BASE_URL: base, ...options.env } });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, base };
}
