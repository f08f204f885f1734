/**
 * Pages of /verify/oauth, where a human signs in and approves an MCP client's OAuth request (docs/api.md, "Remote
 * MCP and OAuth"). The client's name is its own claim: it is shown escaped, next to where the browser will return.
 */
import { escapeHtml, simplePage } from './layout.js';

export interface ClientSummary {
  /** The client's self-declared name. */
  readonly name: string;
  /** The exact redirect URI the answer goes to. */
  readonly redirectUri: string;
}

function summary(client: ClientSummary): string {
  return `<dl><dt>Application</dt><dd id="client-name">${escapeHtml(client.name)}</dd>
<dt>Returns to</dt><dd id="redirect-uri"><code>${escapeHtml(client.redirectUri)}</code></dd></dl>`;
}

const ONLY_IF = '<p>Approve only if you connected this application to htmldrop yourself, just now.</p>';

export function oauthSignInPage(client: ClientSummary, providerName: string, loginHref: string): string {
  return simplePage(
    'Connect an application',
    `<p>An application asks to publish and manage drops for you.</p>${summary(client)}${ONLY_IF}
<a class="button primary" id="sign-in" href="${escapeHtml(loginHref)}">Sign in with ${escapeHtml(providerName)} to continue</a>`,
  );
}

export function oauthConfirmPage(
  client: ClientSummary,
  who: { login: string; provider: string },
  fields: { request: string; csrf: string },
): string {
  const hidden = `<input type="hidden" name="request" value="${escapeHtml(fields.request)}"><input type="hidden" name="csrf" value="${escapeHtml(fields.csrf)}">`;
  return simplePage(
    `Allow ${client.name}?`,
    `<p>Approving gives this application a token that can create, change and delete drops in your account until you revoke it (Tokens, in the console).</p>${summary(client)}${ONLY_IF}
<form method="post" action="/verify/oauth/decide">${hidden}<div class="row">
<button class="primary" type="submit" name="decision" value="approve" id="approve">Approve</button>
<button class="secondary" type="submit" name="decision" value="deny" id="deny">Deny</button></div></form>
<form method="post" action="/verify/oauth/logout" class="small" style="margin-top:20px">${hidden}
<p class="small" id="signed-in-as">Signed in as <strong>${escapeHtml(who.login)}</strong> (${escapeHtml(who.provider)}). <button class="link" type="submit" id="sign-out">Not you?</button></p></form>`,
  );
}

export type OAuthOutcome = 'expired' | 'unknown_client' | 'cross_site' | 'invalid';

const OUTCOMES: Record<OAuthOutcome, [string, string]> = {
  expired: [
    'This request expired',
    'Authorization requests are valid for 10 minutes. Connect again from your application.',
  ],
  unknown_client: ['Unknown application', 'This application is not registered (any more). Connect again from it.'],
  cross_site: [
    'Approval refused',
    'This approval did not come from your signed-in approval page. Open the link again.',
  ],
  invalid: ['Choose Approve or Deny', 'Open the link again and choose Approve or Deny.'],
};

export function oauthOutcomePage(outcome: OAuthOutcome): string {
  const [title, text] = OUTCOMES[outcome];
  return simplePage(title, `<p id="outcome" data-outcome="${outcome}">${escapeHtml(text)}</p>`);
}
