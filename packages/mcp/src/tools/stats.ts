/** The `get_stats` tool: read receipts of a drop. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from './context.js';
import { slug } from './schema.js';

const TOOL = {
  title: 'Get read receipts of a drop',
  description:
    'Whether and how much one of your drops was viewed: views (renders of the viewer page; may lag by a few seconds), unique_viewers (distinct viewers, recognized within one UTC day), first_viewed_at and last_viewed_at (Unix ms, null when never viewed), and the same per version, newest first. Returns {"views","unique_viewers","first_viewed_at","last_viewed_at","versions":[{"version","views","unique_viewers","last_viewed_at"}...]}.',
  inputSchema: { slug },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

export function registerStatsTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('get_stats', TOOL, (args) => guarded(async (client) => (await client()).stats(args.slug)));
}
