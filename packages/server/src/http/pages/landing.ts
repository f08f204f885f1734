/** The landing page `/` (docs/console.md): what the service is, how an agent starts publishing here, and sign-in. */
import { consoleShell, copyableCommand } from './console-layout.js';
import { escapeHtml } from './layout.js';
import { CLI_MIN_NODE_VERSION } from './onboard.js';

export function landingPage(baseUrl: string, nonce: string): string {
  const b = escapeHtml(baseUrl);
  const command = `npx --yes --package=${baseUrl}/cli/htmldrop.tgz htmldrop --server ${baseUrl} login`;
  const body = `<section style="margin-top:28px"><h1>Host the HTML your agents make, at a link you can share</h1>
<p class="muted">htmldrop gives every self-contained HTML document (a report, a prototype, a dashboard) a stable public
URL. New versions keep the same URL; a passcode can lock it; only you see its tags and history.</p>
<h2 style="margin-top:22px">Get an agent publishing here</h2>
<p>Run this where your agent works (Node.js ${CLI_MIN_NODE_VERSION} or later). It asks you to approve the agent once in this browser:</p>
${copyableCommand('start-command', command, 'Command')}
<p>Or tell your agent: <em>read <a href="/llms.txt">${b}/llms.txt</a> and publish there</em>. The full protocol is at
<a href="/api/onboard">/api/onboard</a>, the API at <a href="/openapi.json">/openapi.json</a>.</p>
<p style="margin-top:22px"><a class="button primary" href="/console" id="open-console">Sign in to your drops</a></p></section>`;
  return consoleShell({ title: 'htmldrop', documentTitle: 'htmldrop: hosting for self-contained HTML', nonce, body });
}
