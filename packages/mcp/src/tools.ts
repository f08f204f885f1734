/**
 * The htmldrop MCP tools: publish (with optional upsert by tags), update, list, get, delete, the versions' diff and
 * restore, and the feedback loop's get_feedback, resolve_comment and get_stats. A thin layer over
 * @htmldrop/client: same token resolution as the CLI, same checks, same client-side upsert and lock.
 * Results are JSON text; failures are `isError` results whose JSON names the error code.
 * One file per tool under tools/; what they share (client, token resolution, document reading) is tools/context.ts.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createToolContext, type ToolOptions } from './tools/context.js';
import { registerDeleteTool } from './tools/delete.js';
import { registerDiffTool } from './tools/diff.js';
import { registerFeedbackTool } from './tools/feedback.js';
import { registerGetTool } from './tools/get.js';
import { registerListTool } from './tools/list.js';
import { registerPublishTool } from './tools/publish.js';
import { registerResolveTool } from './tools/resolve.js';
import { registerRestoreTool } from './tools/restore.js';
import { registerStatsTool } from './tools/stats.js';
import { registerUpdateTool } from './tools/update.js';

export type { ToolOptions } from './tools/context.js';
export { errorResult } from './tools/errors.js';

/** Registers the ten tools, in the order tools/list shows them. */
export function registerTools(mcp: McpServer, options: ToolOptions): void {
  const context = createToolContext(options);
  registerPublishTool(mcp, context);
  registerUpdateTool(mcp, context);
  registerListTool(mcp, context);
  registerGetTool(mcp, context);
  registerDeleteTool(mcp, context);
  registerDiffTool(mcp, context);
  registerRestoreTool(mcp, context);
  registerFeedbackTool(mcp, context);
  registerResolveTool(mcp, context);
  registerStatsTool(mcp, context);
}
