/** Pages of /verify, where a human signs in and approves an agent's device-code request (spec 5.4). */
import { escapeHtml, simplePage } from './layout.js';

export interface RequestSummary {
  /** Display form, XXXX-XXXX. */
  readonly code: string;
  readonly label: string | null;
  readonly requestedAt: number;
  readonly now: number;
}

function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function ago(ms: number, now: number): string {
  const minutes = Math.max(0, Math.round((now - ms) / 60_000));
  return minutes === 0 ? 'just now' : minutes === 1 ? '1 minute ago' : `${minutes} minutes ago`;
}

function summary(request: RequestSummary): string {
  return `<div class="code" id="user-code">${escapeHtml(request.code)}</div><dl>
<dt>Token label</dt><dd id="request-label">${request.label === null ? '<em>none</em>' : escapeHtml(request.label)}</dd>
<dt>Requested</dt><dd id="request-time">${escapeHtml(formatTime(request.requestedAt))} (${ago(request.requestedAt, request.now)})</dd></dl>`;
}

export function enterCodePage(error: string | null): string {
  return simplePage(
    'Connect an agent',
    `<p>Enter the code your agent showed you.</p>${error === null ? '' : `<p class="err" id="verify-error" role="alert">${escapeHtml(error)}</p>`}
<form method="get" action="/verify"><input type="text" name="code" id="code" placeholder="XXXX-XXXX" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<button class="primary" type="submit">Continue</button></form>`,
  );
}

export function signInPage(request: RequestSummary, providerName: string, loginHref: string): string {
  return simplePage(
    'Connect an agent',
    `<p>An agent asks for a token to publish drops for you. Check that this code matches the one it showed.</p>${summary(request)}
<a class="button primary" id="sign-in" href="${escapeHtml(loginHref)}">Sign in with ${escapeHtml(providerName)} to continue</a>`,
  );
}

export function confirmPage(request: RequestSummary, who: { login: string; provider: string }, csrf: string): string {
  const hidden = `<input type="hidden" name="code" value="${escapeHtml(request.code)}"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
  return simplePage(
    'Approve this agent?',
    `<p>Approving gives the agent a token that can create, change and delete drops in your account until you revoke it.</p>${summary(request)}
<form method="post" action="/verify/decide">${hidden}<div class="row">
<button class="primary" type="submit" name="decision" value="approve" id="approve">Approve</button>
<button class="secondary" type="submit" name="decision" value="deny" id="deny">Deny</button></div></form>
<form method="post" action="/verify/logout" class="small" style="margin-top:20px"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<p class="small" id="signed-in-as">Signed in as <strong>${escapeHtml(who.login)}</strong> (${escapeHtml(who.provider)}). <button class="link" type="submit" id="sign-out">Not you?</button></p></form>`,
  );
}

export function localSignInPage(state: string, code: string, error: string | null): string {
  return simplePage(
    'Sign in',
    `<p>This service uses local sign-in: choose the username your drops belong to.</p>${error === null ? '' : `<p class="err" id="verify-error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/verify/callback"><input type="hidden" name="state" value="${escapeHtml(state)}"><input type="hidden" name="code" value="${escapeHtml(code)}">
<label for="username">Username</label><input type="text" name="username" id="username" autocomplete="username" required autofocus>
<button class="primary" type="submit" id="local-sign-in">Sign in</button></form>`,
  );
}

export type Outcome = 'approved' | 'denied' | 'expired' | 'invalid' | 'done' | 'rate_limited' | 'error';

const OUTCOMES: Record<Outcome, [string, string]> = {
  approved: ['Approved', 'Your agent will receive its token on its next poll. You can close this tab.'],
  denied: ['Denied', 'The request was refused; the agent gets no token.'],
  expired: ['This request expired', 'Codes are valid for 10 minutes. Ask your agent to start again.'],
  invalid: ['Unknown code', 'No request has this code. Check the code your agent showed, or ask it to start again.'],
  done: ['Already handled', 'This request was already approved or denied.'],
  rate_limited: ['Too many attempts', 'Wait a few minutes before trying another code.'],
  error: ['Sign-in failed', 'Something went wrong.'],
};

export function outcomePage(outcome: Outcome, detail?: string): string {
  const [title, text] = OUTCOMES[outcome];
  return simplePage(title, `<p id="outcome" data-outcome="${outcome}">${escapeHtml(detail ?? text)}</p>`);
}
