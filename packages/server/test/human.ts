/**
 * Plays the human with plain fetch against a running service using the local provider: signs in as `username`
 * and approves (or denies) an agent's device request (`approveAsHuman`) or an MCP client's OAuth request
 * (`approveOAuthAsHuman`).
 */

/** Cookies kept across requests, as a browser would for one site. */
function cookieJar() {
  const jar = new Map<string, string>();
  return {
    remember(response: Response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
    },
    header: () =>
      [...jar]
        .filter(([, v]) => v !== '')
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
  };
}

type Jar = ReturnType<typeof cookieJar>;

/** A same-origin form post from one of the service's pages. */
function form(jar: Jar, origin: string, fields: Record<string, string>) {
  return {
    method: 'POST',
    redirect: 'manual' as const,
    headers: { cookie: jar.header(), origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  };
}

/** Follows a sign-in start (`loginPath`) through the local provider's form as `username`. */
async function signIn(jar: Jar, base: string, origin: string, loginPath: string, username: string, code = '') {
  const login = await fetch(`${base}${loginPath}`, { redirect: 'manual' });
  jar.remember(login);
  const local = await fetch(new URL(login.headers.get('location') ?? '', base), { headers: { cookie: jar.header() } });
  const state = /name="state" value="([^"]+)"/.exec(await local.text())?.[1] ?? '';
  const signedIn = await fetch(`${base}/verify/callback`, form(jar, origin, { state, code, username }));
  jar.remember(signedIn);
  // Signed in: a 303 on to the page the sign-in began on.
  if (signedIn.status !== 303) throw new Error(`sign-in failed: ${signedIn.status}`);
}

/** Signs `username` in at the console, as a browser does; the Cookie header of the session it gets. */
export async function signInAtConsole(base: string, username: string): Promise<string> {
  const jar = cookieJar();
  await signIn(jar, base, base, '/console/login?next=/console', username);
  return jar.header();
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

export async function approveAsHuman(
  verificationUrl: string,
  username: string,
  options: { baseUrl?: string; decision?: 'approve' | 'deny' } = {},
): Promise<void> {
  const url = new URL(verificationUrl);
  // Requests may go to any instance (`baseUrl`); Origin is the public address the pages are served under.
  const base = options.baseUrl ?? url.origin;
  const origin = url.origin;
  const code = url.searchParams.get('code') ?? '';
  const jar = cookieJar();
  await signIn(jar, base, origin, `/verify/login?code=${code}`, username, code);
  const page = await fetch(`${base}/verify?code=${code}`, { headers: { cookie: jar.header() } });
  const csrf = csrfOf(await page.text());
  const decided = await fetch(
    `${base}/verify/decide`,
    form(jar, origin, { code, csrf, decision: options.decision ?? 'approve' }),
  );
  if (decided.status !== 200) throw new Error(`decision failed: ${decided.status} ${await decided.text()}`);
}

/**
 * Opens an OAuth authorization URL, signs in and decides on the approval page; returns where the service sends
 * the browser back to (the client's redirect URI with `code` or `error`).
 */
export async function approveOAuthAsHuman(
  authorizationUrl: string,
  username: string,
  options: { decision?: 'approve' | 'deny' } = {},
): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const jar = cookieJar();
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  if (authorize.status !== 303) throw new Error(`authorize: ${authorize.status} ${await authorize.text()}`);
  const approval = new URL(authorize.headers.get('location') ?? '', origin);
  const request = approval.searchParams.get('request') ?? '';
  await signIn(jar, origin, origin, `/verify/oauth/login?request=${encodeURIComponent(request)}`, username);
  const page = await fetch(approval, { headers: { cookie: jar.header() } });
  const csrf = csrfOf(await page.text());
  const decided = await fetch(
    `${origin}/verify/oauth/decide`,
    form(jar, origin, { request, csrf, decision: options.decision ?? 'approve' }),
  );
  if (decided.status !== 303) throw new Error(`decision failed: ${decided.status} ${await decided.text()}`);
  return new URL(decided.headers.get('location') ?? '');
}
