/** The `list` tool: the caller's drops, filtered by tags, sorted and paged. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { metadata } from './schema.js';

const TOOL = {
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
};

export function registerListTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('list', TOOL, (args) =>
    guarded(async (client) => {
      const api = await client();
      const page = await api.listDrops({
        pageSize: args.limit ?? 50,
        ...(args.page === undefined ? {} : { page: args.page }),
        ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
        ...(args.sort_by === undefined ? {} : { sortBy: args.sort_by }),
        ...(args.sort_order === undefined ? {} : { sortOrder: args.sort_order }),
      });
      return { data: page.data, total_items: page.pagination.total_items, page: page.pagination.page };
    }),
  );
}
