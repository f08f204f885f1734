/** Failed tool calls: the error's JSON plus, for the codes an agent can act on, a hint saying what to do next. */
import { HtmlDropError } from '@htmldrop/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** How the user runs the CLI that signs in: from the service's tarball, or the workspace program in the repository. */
function cliForms(server: string): string {
  return (
    `The CLI must sign in to ${server}: outside the htmldrop repository run \`HTMLDROP_SERVER=${server} npx --yes ` +
    `--package=${server}/cli/htmldrop.tgz htmldrop login\`, inside it \`HTMLDROP_SERVER=${server} npx --no-install ` +
    'htmldrop login` (plus any flag the message names).'
  );
}

/** What to do about a token the service refused; the message already names the token's source and the command. */
function tokenHint(error: HtmlDropError, server: string): string {
  const source = error.details?.token_source;
  const after =
    source === '--token' || source === 'HTMLDROP_TOKEN'
      ? `This MCP server's ${source} is set in the MCP client's configuration: the user changes it there (as the message says) and restarts the server.`
      : 'This MCP server reads the token file again on every tool call: retry once the user has signed in.';
  return `Ask the user to sign in again with the htmldrop CLI, as the message says (it prints a URL to approve in a browser). ${cliForms(server)} ${after}`;
}

/** Where this MCP server runs: on the agent's machine (stdio), or as the service's remote endpoint. */
export type ServerKind = 'local' | 'hosted';

const HOSTED_TOKEN_HINT =
  'The token of this MCP connection was refused (revoked, or the account signed out): reconnect the MCP client so that it signs in again (OAuth), or give it a new bearer token.';

function hintFor(error: HtmlDropError, server: string | undefined, kind: ServerKind): string | undefined {
  const where = server ?? '<server>';
  if (kind === 'hosted' && ['no_token', 'invalid_token', 'unauthorized'].includes(error.code)) return HOSTED_TOKEN_HINT;
  if (error.code === 'no_token') {
    return `No htmldrop token on this machine. Ask the user to sign in with the htmldrop CLI in a terminal (it prints a URL to approve in a browser). ${cliForms(where)} This MCP server reads the token file on every tool call: retry once the user has signed in. (Or the user sets HTMLDROP_TOKEN in this MCP server's configuration and restarts it.)`;
  }
  if (error.code === 'invalid_token' || error.code === 'unauthorized') return tokenHint(error, where);
  return HINTS[error.code];
}

const HINTS: Readonly<Record<string, string>> = {
  token_file_permissions: 'The token file is readable by others; ask the user to run the chmod command in the message.',
  upsert_ambiguous:
    'Several drops carry these tags. Use more specific upsert_by tags, or call update with the slug of the drop to change.',
  not_html: 'Send a complete HTML document (<!doctype html><html>...</html>), not Markdown or plain text.',
  html_too_large:
    'Make the document smaller: compress or link large images from https:// URLs instead of inlining them.',
  rate_limited: 'Too many writes this minute: wait the retry_after_seconds, then try again.',
  daily_quota_exceeded: 'The daily write quota is used up: try again after retry_after_seconds.',
  quota_exceeded: 'The account has the maximum number of drops: delete old drops first.',
  last_version_cannot_be_deleted: 'This is the only version: delete the whole drop instead (omit version).',
  version_conflict:
    'Someone published another version since the one you based this on (details.latest_version is the latest): get or diff it, fold its changes into your document if needed, then try again with if_match set to that version.',
  version_not_found: 'No such version: get lists the versions that exist.',
  idempotency_key_reused:
    'This idempotency key was used before with another request body: send a new request (a new key), not a changed repeat.',
  request_in_progress: 'The same write is still running on the service: wait a few seconds and call again.',
  sensitive_content:
    'Nothing was published: the document looks like it carries secrets or personal data (details.findings: where, line, rule, masked excerpt). Remove each one (read secrets at run time from the environment or leave them out; replace personal data with aggregates or masked values) and publish again. If a finding is wrong and the operator allows it, send scan: "warn".',
  network_error: 'The htmldrop service is not reachable: check that it runs and that HTMLDROP_SERVER is right.',
  bad_response: 'The configured address does not answer like an htmldrop service: check HTMLDROP_SERVER.',
};

/** A failed tool call: `{"error":{code, message, status?, details?, retry_after_seconds?, hint?}}`, isError. */
export function errorResult(error: unknown, server?: string, kind: ServerKind = 'local'): CallToolResult {
  let body: Record<string, unknown>;
  if (error instanceof HtmlDropError) {
    const hint = hintFor(error, server, kind);
    body = { ...error.toJSON(), ...(hint === undefined ? {} : { hint }) };
  } else {
    body = { code: 'unexpected', message: error instanceof Error ? error.message : String(error) };
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: body }, null, 2) }] };
}
