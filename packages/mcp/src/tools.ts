/**
 * The htmldrop MCP tools: publish (with optional upsert by tags), update, list, search, get, delete, the versions' diff and
 * restore, and the feedback loop's get_feedback, resolve_comment and get_stats. A thin layer over
 * @htmldrop/client: same token resolution as the CLI, same checks, same client-side upsert and lock.
 * Results are JSON text; failures are `isError` results whose JSON names the error code.
 * One file per tool under tools/; what they share (client, token resolution, document reading) is tools/context.ts.
 * Both transports serve these same definitions: the stdio program (main.ts) and the service's remote endpoint
 * (`createMcpServer` with `createHostedToolContext`; docs/api.md "Remote MCP and OAuth").
 */
import { CLIENT_VERSION } from '@htmldrop/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerAccessTools } from './tools/access.js';
import type { ToolContext } from './tools/context.js';
import { registerDeleteTool } from './tools/delete.js';
import { registerDiffTool } from './tools/diff.js';
import { registerFeedbackTool } from './tools/feedback.js';
import { registerGetTool } from './tools/get.js';
import { registerListTool } from './tools/list.js';
import { registerPublishTool } from './tools/publish.js';
import { registerResolveTool } from './tools/resolve.js';
import { registerRestoreTool } from './tools/restore.js';
import { registerSearchTool } from './tools/search.js';
import { registerStatsTool } from './tools/stats.js';
import { registerUpdateTool } from './tools/update.js';

export {
  createHostedToolContext,
  createToolContext,
  createUpsertLock,
  type HostedToolOptions,
  type ToolContext,
  type ToolOptions,
} from './tools/context.js';
export { errorResult } from './tools/errors.js';

/** What the server tells the model about itself (the `instructions` of initialize). */
export const INSTRUCTIONS = `htmldrop hosts complete, standalone HTML documents at stable public URLs. Use \`publish\` with the full
document (inline CSS/JS, no local files) and share the returned drop.url. To keep one URL for a document you
regenerate, pass upsert_by tags to \`publish\` (or \`update\` a known slug). \`list\` finds drops by tags, \`search\` by
the words they hold (title, text, context); \`get\` shows versions; \`diff\` shows what changed between two versions and \`restore\` republishes an old one; \`delete\` removes a
drop or one version. Pass \`if_match\` (the latest_version you worked from) to \`update\` so that nobody's version is
overtaken unseen; \`expires\` ("7d", an ISO date, "never") makes a drop expire; \`network: "none"\` keeps a
sensitive report from sending data anywhere (or list the CDN origins it needs). People comment on a drop in its
viewer: \`get_feedback\` (with \`wait\`) returns their comments; pass the ids a new version addresses as \`resolves\`
to \`update\` (or \`publish\` with upsert_by), or mark one done with \`resolve_comment\`. \`get_stats\` tells whether
the drop was viewed.`;

/** An MCP server named htmldrop with the eleven tools over `context`. */
export function createMcpServer(context: ToolContext): McpServer {
  const mcp = new McpServer({ name: 'htmldrop', version: CLIENT_VERSION }, { instructions: INSTRUCTIONS });
  registerTools(mcp, context);
  // Registering a tool advertises `tools.listChanged`; the tool set never changes, and the remote endpoint has no
  // server-to-client stream a change could be announced on (GET /mcp is 405), so it is not advertised.
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  return mcp;
}

/** Registers the eleven tools, in the order tools/list shows them. */
export function registerTools(mcp: McpServer, context: ToolContext): void {
  registerPublishTool(mcp, context);
  registerUpdateTool(mcp, context);
  registerListTool(mcp, context);
  registerSearchTool(mcp, context);
  registerGetTool(mcp, context);
  registerDeleteTool(mcp, context);
  registerDiffTool(mcp, context);
  registerRestoreTool(mcp, context);
  registerFeedbackTool(mcp, context);
  registerResolveTool(mcp, context);
  registerStatsTool(mcp, context);
  registerAccessTools(mcp, context);
}
