/**
 * The htmldrop MCP tools: publish (with optional upsert by tags), update, list, get, delete. A thin layer over
 * @htmldrop/client: same token resolution as the CLI, same checks, same client-side upsert and lock.
 * Results are JSON text; failures are `isError` results whose JSON names the error code.
 */
import os from 'node:os';
import path from 'node:path';
import {
  assertPublishable,
  checkHtml,
  type Drop,
  explainTokenError,
  HtmlDropClient,
  HtmlDropError,
  type HtmlWarning,
  type ResolvedToken,
  readTextSource,
  requireToken,
  upsertDrop,
} from '@htmldrop/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface ToolOptions {
  /** Base URL of the service. */
  readonly server: string;
  /** A `--token` given to the MCP server; else ./.htmldrop/token, HTMLDROP_TOKEN, ~/.config/htmldrop/token. */
  readonly token?: string | undefined;
  /** Base of ./.htmldrop/token and of relative `file` paths; default process.cwd(). */
  readonly cwd?: string;
}

const STANDALONE_RULE =
  'The HTML must be ONE complete, standalone HTML document: start with <!doctype html>, keep CSS and JavaScript inline ' +
  '(or load them from public https:// CDNs), embed images as data: URLs or use absolute https:// URLs. Relative ' +
  'references to local files (images, stylesheets, scripts, other pages) will NOT load: only this one document is ' +
  'uploaded, and it is shown in a sandboxed iframe. No build step happens. At most 2 MiB (2097152 bytes).';

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

function hintFor(error: HtmlDropError, server: string | undefined): string | undefined {
  const where = server ?? '<server>';
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
  network_error: 'The htmldrop service is not reachable: check that it runs and that HTMLDROP_SERVER is right.',
  bad_response: 'The configured address does not answer like an htmldrop service: check HTMLDROP_SERVER.',
};

const slug = z.string().min(1).max(64).describe('The drop identifier (the last part of its url).');
const metadata = z
  .record(z.string(), z.string())
  .describe(
    'Owner-only tags (string values; at most 10 keys of [A-Za-z0-9_.-], values up to 256 characters). Never shown publicly.',
  );
const htmlInput = {
  html: z.string().optional().describe(`The document. ${STANDALONE_RULE} Give html or file, not both.`),
  file: z
    .string()
    .optional()
    .describe(
      'Instead of html: path of an .html file on the machine running this MCP server (relative to its working directory).',
    ),
};

function text(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** A failed tool call: `{"error":{code, message, status?, details?, retry_after_seconds?, hint?}}`, isError. */
export function errorResult(error: unknown, server?: string): CallToolResult {
  let body: Record<string, unknown>;
  if (error instanceof HtmlDropError) {
    const hint = hintFor(error, server);
    body = { ...error.toJSON(), ...(hint === undefined ? {} : { hint }) };
  } else {
    body = { code: 'unexpected', message: error instanceof Error ? error.message : String(error) };
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: body }, null, 2) }] };
}

function warningsJson(warnings: readonly HtmlWarning[]) {
  return warnings.map(({ code, message }) => ({ code, message }));
}

export function registerTools(mcp: McpServer, options: ToolOptions): void {
  const cwd = options.cwd ?? process.cwd();
  const base = new HtmlDropClient({ server: options.server, maxRetries: 3, maxRetryWaitSeconds: 30 });

  /**
   * Runs one tool call. `client()` resolves the token on every call, so a `htmldrop login` after the MCP server
   * started is picked up; when the service refuses that token, the error names where it came from and how to sign
   * in again (the same wording as the CLI's).
   */
  async function guarded(run: (client: () => Promise<HtmlDropClient>) => Promise<unknown>): Promise<CallToolResult> {
    let token: ResolvedToken | undefined;
    const client = async () => {
      token = await requireToken({ flag: options.token, cwd, home: os.homedir(), env: process.env });
      return base.withToken(token.token);
    };
    try {
      return text(await run(client));
    } catch (error) {
      return errorResult(explainTokenError(error, token), base.server);
    }
  }

  async function documentOf(input: { html?: string | undefined; file?: string | undefined }) {
    if ((input.html === undefined) === (input.file === undefined)) {
      throw new HtmlDropError('usage', 'Give exactly one of html (the document text) or file (a path).');
    }
    let html: string;
    let name = 'The document';
    if (input.file !== undefined) {
      const source = await readTextSource(path.resolve(cwd, input.file));
      html = source.text;
      name = source.name;
    } else {
      html = input.html ?? '';
    }
    assertPublishable(html, { name });
    return { html, warnings: checkHtml(html) };
  }

  mcp.registerTool(
    'publish',
    {
      title: 'Publish an HTML document',
      description: `Publish a complete, standalone HTML document at a stable public URL and return the drop; share its \`url\`. ${STANDALONE_RULE}

To keep ONE url for a document you regenerate (a report, a dashboard), pass \`upsert_by\` tags, e.g. {"project":"acme","kind":"weekly"}: the drop carrying all of them gets a new version behind the same url; if none does, a new drop with those tags is created; if several do, nothing changes and the error upsert_ambiguous lists them. Concurrent upserts on this machine are serialized.

Returns {"action":"created"|"updated","drop":{slug,url,raw_url,latest_version,...},"warnings":[...]}; warnings name what may break (relative references to local files, a missing doctype).`,
      inputSchema: {
        ...htmlInput,
        title: z.string().min(1).max(200).describe('Title shown on the viewer page (at most 200 characters).'),
        description: z.string().max(500).optional().describe('Optional description (at most 500 characters).'),
        context: z
          .string()
          .optional()
          .describe(
            'Optional reasoning trace recorded with this version (at most 65536 bytes). It is shown publicly on the viewer behind a toggle: no secrets.',
          ),
        passcode: z.string().min(4).optional().describe('Optional share gate (at least 4 characters); not encryption.'),
        metadata: metadata.optional(),
        upsert_by: metadata
          .optional()
          .describe(
            'Tags that identify the drop to update (lookup, then update or create). On update, `metadata` keys are merged into the existing tags.',
          ),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (input) =>
      guarded(async (client) => {
        const { html, warnings } = await documentOf(input);
        const api = await client();
        const optional = {
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.context === undefined ? {} : { context: input.context }),
          ...(input.passcode === undefined ? {} : { passcode: input.passcode }),
        };
        let result: { action: 'created' | 'updated'; drop: Drop };
        if (input.upsert_by !== undefined && Object.keys(input.upsert_by).length > 0) {
          result = await upsertDrop(api, {
            match: input.upsert_by,
            html,
            title: input.title,
            ...optional,
            ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
          });
        } else {
          const drop = await api.createDrop({
            title: input.title,
            html,
            ...optional,
            ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
          });
          result = { action: 'created', drop };
        }
        return { ...result, warnings: warningsJson(warnings) };
      }),
  );

  mcp.registerTool(
    'update',
    {
      title: 'Upload a new version of a drop',
      description: `Upload a new version of an existing drop: same url, latest_version + 1 (older versions stay viewable at url?v=<n>). ${STANDALONE_RULE}

Returns {"action":"updated","drop":{...},"warnings":[...]}.`,
      inputSchema: {
        slug,
        ...htmlInput,
        title: z.string().min(1).max(200).optional().describe('New title (optional).'),
        description: z.string().max(500).optional().describe('New description (optional).'),
        context: z
          .string()
          .optional()
          .describe('Reasoning trace for this version (optional, shown publicly behind a toggle).'),
        metadata: metadata.optional().describe('Tags to set; merged into the existing tags (other keys are kept).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (input) =>
      guarded(async (client) => {
        const { html, warnings } = await documentOf(input);
        const api = await client();
        const merged =
          input.metadata === undefined ? undefined : { ...(await api.getDrop(input.slug)).metadata, ...input.metadata };
        const drop = await api.updateDrop(input.slug, {
          html,
          ...(input.title === undefined ? {} : { title: input.title }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.context === undefined ? {} : { context: input.context }),
          ...(merged === undefined ? {} : { metadata: merged }),
        });
        return { action: 'updated', drop, warnings: warningsJson(warnings) };
      }),
  );

  mcp.registerTool(
    'list',
    {
      title: 'List your drops',
      description:
        'List your drops, newest first. With `metadata`, only drops whose tags include all the given key=value pairs. Returns {"data":[Drop...],"total_items":n}; each Drop has slug, title, url, latest_version, view_count, locked, metadata, created_at and updated_at (Unix ms).',
      inputSchema: {
        metadata: metadata.optional().describe('Equality filters on tags, combined with AND.'),
        sort_by: z.enum(['created_at', 'updated_at', 'view_count']).optional().describe('Default created_at.'),
        sort_order: z.enum(['asc', 'desc']).optional().describe('Default desc.'),
        limit: z.number().int().min(1).max(200).optional().describe('At most this many drops (default 50).'),
        page: z.number().int().min(1).optional().describe('Page number, from 1, of `limit` drops each.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (input) =>
      guarded(async (client) => {
        const api = await client();
        const page = await api.listDrops({
          pageSize: input.limit ?? 50,
          ...(input.page === undefined ? {} : { page: input.page }),
          ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
          ...(input.sort_by === undefined ? {} : { sortBy: input.sort_by }),
          ...(input.sort_order === undefined ? {} : { sortOrder: input.sort_order }),
        });
        return { data: page.data, total_items: page.pagination.total_items, page: page.pagination.page };
      }),
  );

  mcp.registerTool(
    'get',
    {
      title: 'Get a drop and its versions',
      description:
        'Get one of your drops by slug, with its versions (newest first: version, size_bytes, has_context, created_at, is_latest). With `version`, also that version\'s record, including its context. Returns {"drop":{...},"versions":[...],"version"?:{...}}.',
      inputSchema: {
        slug,
        version: z.number().int().min(1).optional().describe('A version number to read in full (optional).'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (input) =>
      guarded(async (client) => {
        const api = await client();
        const [drop, versions] = await Promise.all([api.getDrop(input.slug), api.listVersions(input.slug)]);
        const version = input.version === undefined ? undefined : await api.getVersion(input.slug, input.version);
        return { drop, versions, ...(version === undefined ? {} : { version }) };
      }),
  );

  mcp.registerTool(
    'delete',
    {
      title: 'Delete a drop or one version',
      description:
        'Delete one of your drops with all its versions (its url stops working), or with `version` only that version (the only remaining version cannot be deleted: delete the drop instead). Irreversible. Returns {"deleted":"drop","slug"} or {"deleted":"version","slug","version","drop":{...}}.',
      inputSchema: {
        slug,
        version: z.number().int().min(1).optional().describe('Delete only this version (optional).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    (input) =>
      guarded(async (client) => {
        const api = await client();
        if (input.version !== undefined) {
          const drop = await api.deleteVersion(input.slug, input.version);
          return { deleted: 'version', slug: input.slug, version: input.version, drop };
        }
        await api.deleteDrop(input.slug);
        return { deleted: 'drop', slug: input.slug };
      }),
  );
}
