/** The `search` tool: the caller's drops that hold every word of a query (docs/api.md, "Search"). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { metadata } from './schema.js';

const TOOL = {
  title: 'Search your drops',
  description:
    'Find your drops by what they say: drops whose title, description, latest text (what a reader sees: no markup, scripts or styles) or context hold EVERY word of `query`, in any case, with or without accents; the last word also matches as the beginning of a word. Best match first. Quotes, -, * and OR are plain text (no operators). Returns {"data":[Drop...],"total_items":n}; each Drop has slug, title, url, latest_version, updated_at and match: {snippet: the text around the first word found, fields: where the words were: title, description, content, context}. Use `get` or the url to read one.',
  inputSchema: {
    query: z.string().min(1).max(200).describe('The words to look for, at most 200 characters.'),
    metadata: metadata.optional().describe('Equality filters on tags, combined with AND.'),
    sort_by: z
      .enum(['created_at', 'updated_at', 'view_count'])
      .optional()
      .describe('Default: best match first. Give a field to sort by it instead.'),
    sort_order: z.enum(['asc', 'desc']).optional().describe('With sort_by; default desc.'),
    limit: z.number().int().min(1).max(200).optional().describe('At most this many drops (default 20).'),
    page: z.number().int().min(1).optional().describe('Page number, from 1, of `limit` drops each.'),
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

export function registerSearchTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('search', TOOL, (args) =>
    guarded(async (client) => {
      const api = await client();
      const page = await api.searchDrops(args.query, {
        pageSize: args.limit ?? 20,
        ...(args.page === undefined ? {} : { page: args.page }),
        ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
        ...(args.sort_by === undefined ? {} : { sortBy: args.sort_by }),
        ...(args.sort_order === undefined ? {} : { sortOrder: args.sort_order }),
      });
      return { data: page.data, total_items: page.pagination.total_items, page: page.pagination.page };
    }),
  );
}
