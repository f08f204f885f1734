/** The `resolve_comment` tool: mark one comment on a drop resolved. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { slug } from './schema.js';

const TOOL = {
  title: 'Mark a comment resolved',
  description:
    "Mark a comment on one of your drops resolved, in the drop's latest version, without uploading anything. When a new version addresses the comment, pass its id in `resolves` of update (or publish with upsert_by) instead. Returns the Comment, with resolved_at and resolved_in_version set.",
  inputSchema: {
    slug,
    comment_id: z.string().min(1).max(40).describe('The comment id (c_...), from get_feedback.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
};

export function registerResolveTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('resolve_comment', TOOL, (args) =>
    guarded(async (client) => (await client()).resolveComment(args.slug, args.comment_id)),
  );
}
