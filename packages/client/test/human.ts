/**
 * Plays the human of the device flow with the local identity provider, over plain fetch: opens the verification
 * URL, signs in with a username, approves. Manual cookies, no redirects followed, the Origin header the service
 * checks. (Same steps as packages/server/test/device.test.ts, kept here so this package does not depend on them.)
 */

function cookiesOf(response: Response): string[] {
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .filter((c) => c !== '' && !c.endsWith('='));
}

function field(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no ${name} field in: ${html.slice(0, 500)}`);
  return value;
}

async function expectStatus(response: Response, status: number, step: string): Promise<string> {
  const text = await response.text();
  if (response.status !== status)
    throw new Error(`${step}: HTTP ${response.status}, expected ${status}: ${text.slice(0, 300)}`);
  return text;
}

/** Signs in as `username` at `verificationUrl` ({base}/verify?code=XXXX-XXXX) and presses Approve (or Deny). */
export async function approveDeviceCode(
  verificationUrl: string,
  username: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<void> {
  const url = new URL(verificationUrl);
  const origin = url.origin;
  const code = url.searchParams.get('code') ?? '';
  const form = { 'content-type': 'application/x-www-form-urlencoded', origin };

  const login = await fetch(`${origin}/verify/login?code=${encodeURIComponent(code)}`, { redirect: 'manual' });
  await expectStatus(login, 303, 'GET /verify/login');
  const signin = cookiesOf(login).join('; ');
  const local = await fetch(new URL(login.headers.get('location') ?? '', origin), {
    headers: { cookie: signin },
    redirect: 'manual',
  });
  const state = field(await expectStatus(local, 200, 'GET /verify/local'), 'state');

  const callback = await fetch(`${origin}/verify/callback`, {
    method: 'POST',
    headers: { ...form, cookie: signin },
    body: new URLSearchParams({ state, username }).toString(),
    redirect: 'manual',
  });
  await expectStatus(callback, 303, 'POST /verify/callback');
  const session = cookiesOf(callback).join('; ');

  const page = await fetch(`${origin}/verify?code=${encodeURIComponent(code)}`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  const csrf = field(await expectStatus(page, 200, 'GET /verify'), 'csrf');

  const decide = await fetch(`${origin}/verify/decide`, {
    method: 'POST',
    headers: { ...form, cookie: session },
    body: new URLSearchParams({ code, csrf, decision }).toString(),
    redirect: 'manual',
  });
  const outcome = await expectStatus(decide, 200, 'POST /verify/decide');
  const expected = decision === 'approve' ? 'approved' : 'denied';
  if (!outcome.includes(`data-outcome="${expected}"`))
    throw new Error(`decision not recorded: ${outcome.slice(0, 300)}`);
}
