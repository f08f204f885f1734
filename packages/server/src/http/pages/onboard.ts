/** The agent protocol (GET /api/onboard), llms.txt and the agent card: one text, several shapes. */
import type { Config, Limits } from '../../config.js';

/**
 * The oldest Node.js the CLI runs on, as the pages say it: the client's MIN_NODE_VERSION, which the service does not
 * import at start-up (it loads the client package only on first use); node-version.test.ts holds the two equal.
 */
export const CLI_MIN_NODE_VERSION = '20.19';

/** The heading and what the service does. */
function introSection(b: string): string {
  return `# htmldrop: publish an HTML document, get a public URL

Service: ${b}
You upload one **complete, standalone HTML document** (inline CSS/JS, or assets from public CDNs; no build step),
or that document with the **files it loads by relative URL** (images, CSS, scripts, data, fonts: a folder such as a
report with its charts, or a build's \`dist/\`). You get a public URL that never changes; uploading again creates a new
numbered version behind it.`;
}

/** The CLI and the MCP server, the shortest way in. */
function cliSection(b: string): string {
  return `## Fastest: the htmldrop CLI (Node.js ${CLI_MIN_NODE_VERSION} or later)
The service hands out its own CLI; nothing else to install:

    export HTMLDROP_SERVER=${b}
    alias htmldrop="npx --yes --package=${b}/cli/htmldrop.tgz htmldrop"
    htmldrop login                                   # prints a URL and a code for a human; waits; stores the token
    htmldrop publish report.html --title "Q3 report" # prints the public URL
    htmldrop publish dist/                           # a folder: dist/index.html with every file beside it
    htmldrop publish dist/ --dry-run                 # lists what would go (dotfiles are skipped); sends nothing
    htmldrop publish report.html --title "Q3 report" --upsert project=acme --upsert kind=weekly
                                                     # same tags again: a new version behind the same URL
    htmldrop feedback <slug> --wait 60               # waits for comments people leave on the URL; prints them
    htmldrop update <slug> report.html --resolves <id>,<id>
                                                     # a new version; those comments are resolved in it
    htmldrop update <slug> report.html --if-match 3  # only if version 3 is still the latest (else exit 7)
    htmldrop diff <slug>                             # what changed in the latest version (--from a --to b)
    htmldrop restore <slug> 2                        # version 2 again, as the newest version
    htmldrop publish report.html --expires 7d        # the URL answers 410 after 7 days (12h, 30m, a date, never)

If your shell cannot wait for the human, run \`htmldrop login --no-wait\` (prints the URL, code and a poll token)
and later \`htmldrop login --poll-token <token>\`. Output is JSON when stdout is not a terminal; exit codes:
0 ok, 2 bad input, 3 authentication, 4 not found, 5 limits, 6 service unreachable, 7 conflict.

MCP clients: connect to the remote MCP endpoint **${b}/mcp** (Streamable HTTP; tools publish with upsert by tags,
update, list, get, delete, diff, restore, get_feedback, resolve_comment, get_stats). A client that speaks OAuth
signs its human in on first use (it opens a browser page to approve it; its token lasts an hour and the client
renews it by itself); any other sends
\`Authorization: Bearer hd_...\` (a token from the CLI or step 1). One line per client:

    claude mcp add --transport http htmldrop ${b}/mcp                # Claude Code
    gemini mcp add --transport http htmldrop ${b}/mcp                # Gemini CLI
    code --add-mcp '{"name":"htmldrop","type":"http","url":"${b}/mcp"}'   # VS Code
    claude mcp add --transport http htmldrop ${b}/mcp --header "Authorization: Bearer hd_..."
                                                     # with a token instead of OAuth

Cursor, Windsurf and others: \`{"mcpServers": {"htmldrop": {"url": "${b}/mcp"}}}\`. Claude and ChatGPT in the
browser: add a custom connector with that URL. For a local process instead (stdio, the CLI's token):
\`npx --yes --package=${b}/mcp/htmldrop-mcp.tgz htmldrop-mcp\` with env \`{"HTMLDROP_SERVER": "${b}"}\`.

Reading a drop: \`curl ${b}/p/<slug>.md\` (or \`Accept: text/markdown\` on the drop's URL) answers its title,
description, version, the document as Markdown and the version's context; a locked drop needs its passcode first
(or the owner's token).

Everything below is the same protocol with curl.`;
}

/** Step 1: the device flow and where tokens are kept. */
function tokenSection(b: string): string {
  return `## 1. Get a token (once per machine)
Every owner call sends \`Authorization: Bearer <token>\`; tokens look like \`hd_...\`; this one never expires (revoke it).
If you already have one (see "Where tokens live" below), skip to step 2. Otherwise run the device flow; a human
approves once in a browser:

    curl -s -X POST ${b}/api/auth/start -H 'Content-Type: application/json' -d '{"label":"<agent> on <host>"}'

Answer: \`code\` (XXXX-XXXX), \`verification_url\`, \`poll_token\`, \`expires_in\` (600 s), \`poll_interval\` (2 s).
Tell the human, verbatim: "Open <verification_url>, sign in, check the code <code>, and press Approve."
Then poll every \`poll_interval\` seconds:

    curl -s "${b}/api/auth/poll?token=<poll_token>"

- \`{"status":"pending"}\`: keep polling (stop after \`expires_in\`).
- \`{"status":"verified","api_token":"hd_...","user_id":"u_..."}\`: the token is shown exactly once. Store it now.
- \`claimed\`, \`expired\` (denied or too late) or \`not_found\`: stop; start again if you did not store a token.

Where tokens live (first match wins): a \`--token\` flag, \`./.htmldrop/token\`, the \`HTMLDROP_TOKEN\` environment
variable, \`~/.config/htmldrop/token\`. Store it with owner-only permissions:

    mkdir -p ~/.config/htmldrop && chmod 700 ~/.config/htmldrop
    (umask 077; printf '%s' "$API_TOKEN" > ~/.config/htmldrop/token)
    export HTMLDROP_TOKEN=$(cat ~/.config/htmldrop/token)
    curl -s ${b}/api/me -H "Authorization: Bearer $HTMLDROP_TOKEN"

(An operator can also mint one on the server: \`htmldrop-server token create --user <login>\`.)`;
}

/** Step 2: the first upload. */
function publishSection(b: string, l: Limits): string {
  return `## 2. Publish
Send the HTML as a JSON string. \`jq\` builds the body safely from a file:

    jq -n --rawfile html report.html --arg title "Q3 report" '{title:$title, html:$html}' \\
      | curl -s -X POST ${b}/api/drops -H "Authorization: Bearer $HTMLDROP_TOKEN" \\
          -H 'Content-Type: application/json' --data-binary @-

Answer (201): a Drop with \`slug\`, \`url\` (the viewer page to share) and \`raw_url\` (the bare document).
\`content_url\` is the document on its own origin, where its localStorage and IndexedDB work (null when the service
has none); the viewer shows it there, so share \`url\` as usual.
Optional fields: \`description\` (<= ${l.maxDescriptionChars} chars), \`passcode\` (>= ${l.minPasscodeChars} chars, a soft share gate),
\`context\` (your reasoning trace for this version, <= ${l.maxContextBytes} bytes, shown behind a toggle on the viewer),
\`metadata\` (owner-only string tags, <= ${l.maxMetadataKeys} keys, for finding the drop again; never shown publicly),
\`comments\` (who may comment in the viewer: \`off\`, \`signed_in\` (default; people signed in to this service) or \`open\`
(anyone with the URL, under a typed name); PATCH changes it), \`expires_at\` (Unix ms, now + 60 s to now + 365 days:
from then on the URL answers 410 and the API 404, and the drop is deleted within the hour; PATCH changes it, null
clears it), \`network\` (what the document may load: \`"open"\` (default), \`"none"\` (nothing from the network, no form
posts; set it for sensitive reports, so nothing the page pulls in can send the data elsewhere) or 1-10 origins such
as \`["https://cdn.jsdelivr.net"]\`; PATCH changes it, PUT refuses it).
Send \`Idempotency-Key: <1-255 visible ASCII chars, e.g. a UUID>\` to retry safely: a repeat with the same key and
body within 24 h answers the first answer again (\`Idempotent-Replayed: true\`) and creates nothing; another body with
that key is 422 \`idempotency_key_reused\`; a repeat while the first still runs is 409 \`request_in_progress\` (retry
after \`Retry-After\`). PUT takes it too.
Never put secrets or personal data in a document: everything is looked at before it is stored, and what looks like a
key, token, private key, password in a URL, card number, IBAN or a list of people's email addresses or phone numbers
comes back as \`warnings\` (\`[{kind, rule, where, line, excerpt}]\`, masked). The version is public: publish one without
it and tell the user to rotate the key. Send \`"scan": "block"\` (POST and PUT) to publish nothing instead (422
\`sensitive_content\`, \`details.findings\`).`;
}

/** Step 2b: files beside the document. */
function filesSection(b: string, l: Limits): string {
  return `## 2b. Files beside the document (images, CSS, scripts, data, fonts)
Add \`files\` to the POST (or PUT): path in the drop to \`{"content":"<text>"}\` or
\`{"content":"<base64>","encoding":"base64"}\`. The document loads them by **relative** URL (\`img/chart.png\`, not
\`/img/chart.png\`), and every version shows its own files:

    jq -n --rawfile html index.html --rawfile css style.css --arg png "$(base64 -w0 chart.png)" \\
      '{title:"Q3 report", html:$html, files:{"style.css":{content:$css}, "img/chart.png":{content:$png, encoding:"base64"}}}' \\
      | curl -s -X POST ${b}/api/drops -H "Authorization: Bearer $HTMLDROP_TOKEN" \\
          -H 'Content-Type: application/json' --data-binary @-

Paths: 1-255 bytes of \`/\`-separated names of letters, digits, \`.\`, \`_\`, \`-\` (case-sensitive; not \`index.html\` at the
top, which is the \`html\`); else 400 \`invalid_file_path\` (\`details.path\`). At most ${l.maxFilesPerVersion} files
(\`too_many_files\`) and ${l.maxVersionBytes} bytes with the HTML (\`version_too_large\`). A PUT without \`files\` makes a version
without files; sending unchanged files again costs no storage. \`GET /api/drops/<slug>/v/<n>\` lists them (\`files\`:
path, size_bytes, content_type, sha256; \`total_bytes\`). CLI: \`htmldrop publish <dir>\`; MCP: \`publish\`/\`update\` with
\`files\` (or \`folder\` on a local MCP server).`;
}

/** Step 3: a new version behind the same URL. */
function updateSection(b: string): string {
  return `## 3. Update (same URL, new version)

    jq -n --rawfile html report.html '{html:$html}' \\
      | curl -s -X PUT ${b}/api/drops/<slug> -H "Authorization: Bearer $HTMLDROP_TOKEN" \\
          -H 'Content-Type: application/json' --data-binary @-

PUT always creates a new version (\`latest_version\` goes up). To change only title, description, metadata,
\`comments\`, \`expires_at\` or \`network\`, use PATCH with those fields (no \`html\`). Any version stays viewable at
\`${b}/p/<slug>?v=<n>\`.
Do not overwrite someone else's version unseen: single-drop answers carry \`ETag: "<latest_version>"\`; send
\`If-Match: "<n>"\` (the version you based your document on) with PUT, PATCH, DELETE or restore. If another version
was published since, the answer is 412 \`version_conflict\` with \`details.latest_version\` and nothing changes:
diff, fold in the other changes, retry with the new version.`;
}

/** Step 4: finding a drop by its tags before writing. */
function lookupSection(b: string): string {
  return `## 4. Find before you publish ("lookup, then mutate")
There is no server-side upsert. Tag your drops, look them up, then PUT to the match or POST a new one:

    curl -s -G ${b}/api/drops -H "Authorization: Bearer $HTMLDROP_TOKEN" \\
      --data-urlencode 'metadata.project=acme' --data-urlencode 'metadata.kind=weekly'

\`data\` holds your matching drops (filters combine with AND). If exactly one matches, PUT to its slug with
\`If-Match: "<its latest_version>"\` (412: someone published meanwhile; look up again); if none, POST with the same
\`metadata\` and an \`Idempotency-Key\` derived from the tags (e.g. their SHA-256): a second writer's create is then 422
\`idempotency_key_reused\` instead of a duplicate drop; look up again and PUT to the winner's drop (none found: the
key's drop was deleted, POST with a fresh key). The CLI's \`--upsert\` and the MCP \`publish\` with \`upsert_by\` do
all of this.`;
}

/** Step 5: the feedback loop (publish, share, wait for comments, revise) and read receipts. */
function feedbackSection(b: string): string {
  return `## 5. The feedback loop: share, wait for comments, revise
1. Publish (step 2).
2. Share \`url\` with the humans. They comment in the viewer's Comments panel, on the version they see, optionally
   quoting a passage.
3. Wait for feedback. This holds the request until a comment arrives, at most \`wait\` seconds (<= 60), and answers
   the comments created after \`since\` (Unix ms; 0 for all), oldest first; \`{"data":[]}\` when none came:

       curl -s "${b}/api/drops/<slug>/comments?since=0&wait=60" -H "Authorization: Bearer $HTMLDROP_TOKEN"

   Each comment: \`id\` (\`c_...\`), \`version\`, \`body\`, \`quote\` (or null), \`author\` (\`name\`, \`kind\`: owner, member
   or guest), \`created_at\`, \`resolved_at\`, \`resolved_in_version\`. Pass the last \`created_at\` as the next \`since\`;
   after an empty answer, ask again with the same \`since\`. \`GET /api/comments?since=...&wait=60\` waits on all your
   drops at once (each comment names its \`slug\`). CLI: \`htmldrop feedback <slug> --wait 60\` (or \`--all\`);
   MCP: \`get_feedback\`.
4. Revise: PUT the new version (step 3) with the ids of the comments it addresses; they are marked resolved in it.
   An id that is not a comment of this drop is 400 \`invalid_arg\`, and nothing is written:

       jq -n --rawfile html report.html '{html:$html, resolves:["c_...","c_..."]}' \\
         | curl -s -X PUT ${b}/api/drops/<slug> -H "Authorization: Bearer $HTMLDROP_TOKEN" \\
             -H 'Content-Type: application/json' --data-binary @-

   CLI: \`htmldrop update <slug> report.html --resolves <id>,<id>\`; MCP: \`update\` with \`resolves\`. To resolve one
   without a new version: \`POST /api/drops/<slug>/comments/<id>/resolve\`. Then wait again (3).

Read receipts: \`GET /api/drops/<slug>/stats\` (CLI \`htmldrop stats <slug>\`, MCP \`get_stats\`) tells whether the URL
was opened: \`views\`, \`unique_viewers\`, \`first_viewed_at\`, \`last_viewed_at\` (null until viewed), and per version.`;
}

/** Step 6: the remaining endpoints. */
function endpointsSection(b: string): string {
  return `## 6. Everything else
- \`GET /api/drops?page=1&pageSize=50&sortBy=created_at|updated_at|view_count&sortOrder=desc|asc\`
- \`GET|PUT|PATCH|DELETE /api/drops/<slug>\`; \`GET /api/drops/<slug>/versions\`; \`GET|DELETE /api/drops/<slug>/v/<n>\`
- \`POST /api/drops/<slug>/v/<n>/restore\`: a new version with version n's HTML and context (CLI \`htmldrop restore\`)
- \`GET /api/drops/<slug>/diff?from=<a>&to=<b>\`: \`{"from","to","unified","added","removed"}\`, a unified diff of the
  HTML; \`to\` defaults to the latest, \`from\` to the version before it (CLI \`htmldrop diff\`)
- \`POST /api/drops/<slug>/passcode\` with \`{"passcode":"..."}\` (\`""\` removes it)
- \`POST /api/drops/<slug>/comments\` with \`{"body":"...","version"?:n,"quote"?:"..."}\` (your own comment);
  \`DELETE /api/drops/<slug>/comments/<id>\`
- \`GET /api/me\`, \`GET /api/tokens\`, \`DELETE /api/tokens/<id>\`
- Machine-readable: ${b}/openapi.json`;
}

/** The limits and how to react to errors. */
function limitsSection(l: Limits): string {
  return `## Limits and errors
HTML <= ${l.maxHtmlBytes} bytes; title <= ${l.maxTitleChars} chars; ${l.maxVersionsPerDrop} versions per drop; ${l.maxDropsPerAccount} drops per account;
${l.maxWritesPerMinute} writes per minute and ${l.maxWritesPerDay} per day per account.
Every error is \`{"error":{"code","message","details"}}\`; switch on \`code\`. On 429 \`rate_limited\` or
\`daily_quota_exceeded\`, wait \`Retry-After\` seconds (also \`details.retry_after_seconds\`) and retry.
\`quota_exceeded\` (too many drops) does not clear by waiting: delete drops first. 412 \`version_conflict\`: If-Match
named an older version (\`details.latest_version\`). 422 \`idempotency_key_reused\`: a new request needs a new key.
409 \`request_in_progress\`: retry with the same key after \`Retry-After\`. An expired drop is 404 \`not_found\` (410
on its public pages).`;
}

/** The Markdown protocol an agent follows end to end with curl: its sections, a blank line apart. */
export function onboardMarkdown(config: Config): string {
  const b = config.baseUrl;
  const l = config.limits;
  const sections = [
    introSection(b),
    cliSection(b),
    tokenSection(b),
    publishSection(b, l),
    filesSection(b, l),
    updateSection(b),
    lookupSection(b),
    feedbackSection(b),
    endpointsSection(b),
    limitsSection(l),
  ];
  return `${sections.join('\n\n')}\n`;
}

export function llmsTxt(config: Config): string {
  const b = config.baseUrl;
  return `# htmldrop

> Host a complete, standalone HTML document at a stable public URL. Upload with a bearer token; anyone with the URL can view it. Re-uploading creates numbered versions behind the same URL.

## Docs
- [Agent protocol](${b}/api/onboard): step-by-step publishing with curl (Markdown; JSON with Accept: application/json)
- [OpenAPI 3.1](${b}/openapi.json): every endpoint, field and error code
- [Agent card](${b}/.well-known/agent-card.json): capabilities and authentication

## Fastest path
- CLI: \`npx --yes --package=${b}/cli/htmldrop.tgz htmldrop login\`, then \`... htmldrop publish report.html --title Report\` (set HTMLDROP_SERVER=${b}).
- Remote MCP: ${b}/mcp (Streamable HTTP; OAuth 2.1 with dynamic client registration, or Authorization: Bearer hd_...), e.g. \`claude mcp add --transport http htmldrop ${b}/mcp\`. Tools: publish, update, list, get, delete, diff, restore, get_feedback, resolve_comment and get_stats.
- Local MCP (stdio): \`npx --yes --package=${b}/mcp/htmldrop-mcp.tgz htmldrop-mcp\` (env HTMLDROP_SERVER=${b}; sign in with the CLI first).
- Read a drop as Markdown: GET ${b}/p/<slug>.md, or its URL with Accept: text/markdown.
- curl: follow ${b}/api/onboard.

## Key rules
- The HTML must be one self-contained document (inline assets or public CDNs), or come with the files it loads by relative URL as "files" on POST /api/drops and PUT (path -> {"content"} or {"content","encoding":"base64"}; CLI: htmldrop publish <dir>); it is shown in a sandboxed iframe.
- Authorization: Bearer hd_... on every /api/ call except /api/onboard and /api/auth/*.
- Get a token with the device flow: POST /api/auth/start, show verification_url and code to a human, poll GET /api/auth/poll?token= every poll_interval seconds; api_token is returned exactly once.
- Feedback loop: share the drop's url (people comment in the viewer's Comments panel), wait for comments with GET /api/drops/<slug>/comments?since=<last created_at>&wait=60, then PUT a new version with resolves: [comment ids]. GET /api/drops/<slug>/stats tells whether it was viewed.
- Concurrent writers: single-drop answers carry ETag: "<latest_version>"; send If-Match: "<n>" on PUT, PATCH, DELETE and POST /api/drops/<slug>/v/<n>/restore, else 412 version_conflict (details.latest_version). Send Idempotency-Key on POST /api/drops and PUT to retry safely (replays answer with Idempotent-Replayed: true; 422 idempotency_key_reused, 409 request_in_progress).
- History: GET /api/drops/<slug>/diff?from=<a>&to=<b> (unified diff of the HTML); POST /api/drops/<slug>/v/<n>/restore (a new version from version n).
- Expiry: expires_at (Unix ms, 60 s to 365 days ahead; null clears on PATCH); afterwards the URL answers 410.
- Network: network "none" on POST /api/drops or PATCH keeps the document from loading anything from the network (use it for sensitive reports); "open" is the default; a list of 1-10 origins allows only those. content_url is the drop on its own origin, where localStorage and IndexedDB work (null when the service has none).
- Errors are {"error":{"code","message","details"}}; on 429 wait Retry-After seconds.
`;
}

/** The tools of the MCP server, remote and stdio alike. */
const MCP_TOOLS = [
  'publish',
  'update',
  'list',
  'get',
  'delete',
  'diff',
  'restore',
  'get_feedback',
  'resolve_comment',
  'get_stats',
] as const;

/** What an agent can do, one entry per endpoint it is likely to need. */
function agentCapabilities() {
  return [
    {
      id: 'publish',
      method: 'POST',
      path: '/api/drops',
      description:
        'Create a drop from HTML; returns its public url. Optional expires_at; network "none" for sensitive reports; Idempotency-Key makes retries safe.',
    },
    {
      id: 'update',
      method: 'PUT',
      path: '/api/drops/{slug}',
      description:
        'Upload a new version behind the same url. If-Match: "<latest_version>" refuses it (412 version_conflict) when someone published since.',
    },
    {
      id: 'list',
      method: 'GET',
      path: '/api/drops',
      description: 'List your drops; filter with metadata.<key>=<value>.',
    },
    { id: 'get', method: 'GET', path: '/api/drops/{slug}', description: 'Read one drop.' },
    { id: 'delete', method: 'DELETE', path: '/api/drops/{slug}', description: 'Delete a drop.' },
    {
      id: 'feedback',
      method: 'GET',
      path: '/api/drops/{slug}/comments?since={ms}&wait={seconds}',
      description: 'Comments people left in the viewer, after since; waits up to 60 s for a new one.',
    },
    {
      id: 'diff',
      method: 'GET',
      path: '/api/drops/{slug}/diff?from={a}&to={b}',
      description: 'A unified diff of two versions of the HTML, with lines added and removed.',
    },
    {
      id: 'restore',
      method: 'POST',
      path: '/api/drops/{slug}/v/{n}/restore',
      description: "A new version with an old version's HTML and context.",
    },
    {
      id: 'stats',
      method: 'GET',
      path: '/api/drops/{slug}/stats',
      description: 'Read receipts: views, distinct viewers, first and last view.',
    },
    {
      id: 'read_markdown',
      method: 'GET',
      path: '/p/{slug}.md',
      description:
        "Any drop as Markdown: title, description, version, the document's text and the version's context (also Accept: text/markdown on /p/{slug}).",
    },
  ];
}

export function agentCard(config: Config) {
  const b = config.baseUrl;
  return {
    schema_version: '1',
    name: 'htmldrop',
    description: 'Publish complete, standalone HTML documents at stable public URLs, with numbered versions.',
    url: b,
    version: '1.0.0',
    documentation_url: `${b}/api/onboard`,
    openapi_url: `${b}/openapi.json`,
    llms_txt_url: `${b}/llms.txt`,
    authentication: {
      type: 'bearer',
      token_prefix: 'hd_',
      header: 'Authorization: Bearer <token>',
      obtain: {
        flow: 'device_code',
        start: { method: 'POST', path: '/api/auth/start' },
        poll: { method: 'GET', path: '/api/auth/poll?token={poll_token}' },
        human_step: 'open verification_url and approve the code',
      },
      oauth: {
        protected_resource_metadata: `${b}/.well-known/oauth-protected-resource/mcp`,
        authorization_server_metadata: `${b}/.well-known/oauth-authorization-server`,
        flow: 'authorization_code with PKCE S256, dynamic client registration; the access token is an hd_ token',
      },
    },
    mcp: {
      url: `${b}/mcp`,
      transport: 'streamable-http',
      authentication: ['oauth2', 'bearer'],
      tools: MCP_TOOLS,
    },
    capabilities: agentCapabilities(),
    limits: {
      max_html_bytes: config.limits.maxHtmlBytes,
      max_files_per_version: config.limits.maxFilesPerVersion,
      max_version_bytes: config.limits.maxVersionBytes,
      max_context_bytes: config.limits.maxContextBytes,
      max_title_chars: config.limits.maxTitleChars,
      max_description_chars: config.limits.maxDescriptionChars,
      max_metadata_keys: config.limits.maxMetadataKeys,
      min_passcode_chars: config.limits.minPasscodeChars,
      max_versions_per_drop: config.limits.maxVersionsPerDrop,
      max_drops_per_account: config.limits.maxDropsPerAccount,
      max_writes_per_minute: config.limits.maxWritesPerMinute,
      max_writes_per_day: config.limits.maxWritesPerDay,
    },
  };
}
