/**
 * Plays the human of the device flow with plain fetch against a running service using the local provider:
 * opens the verification URL, signs in as `username`, and approves (or denies).
 */
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
  const jar = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const cookie = () =>
    [...jar]
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    redirect: 'manual' as const,
    headers: { cookie: cookie(), origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

  const login = await fetch(`${base}/verify/login?code=${code}`, { redirect: 'manual' });
  remember(login);
  const local = await fetch(new URL(login.headers.get('location') ?? '', base), { headers: { cookie: cookie() } });
  const state = /name="state" value="([^"]+)"/.exec(await local.text())?.[1] ?? '';
  const signedIn = await fetch(`${base}/verify/callback`, form({ state, code, username }));
  remember(signedIn);
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status}`);
  const page = await fetch(`${base}/verify?code=${code}`, { headers: { cookie: cookie() } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const decided = await fetch(`${base}/verify/decide`, form({ code, csrf, decision: options.decision ?? 'approve' }));
  if (decided.status !== 200) throw new Error(`decision failed: ${decided.status} ${await decided.text()}`);
}
