/** The `get` tool: one drop with its versions, and optionally one version in full. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { slug } from './schema.js';

const TOOL = {
  title: 'Get a drop and its versions',
  description:
    'Get one of your drops by slug, with its versions (newest first: version, size_bytes, has_context, created_at, is_latest). With `version`, also that version\'s record, including its context. Returns {"drop":{...},"versions":[...],"version"?:{...}}.',
  inputSchema: {
    slug,
    version: z.number().int().min(1).optional().describe('A version number to read in full (optional).'),
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

export function registerGetTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('get', TOOL, (args) =>
    guarded(async (client) => {
      const api = await client();
      const [drop, versions] = await Promise.all([api.getDrop(args.slug), api.listVersions(args.slug)]);
      const version = args.version === undefined ? undefined : await api.getVersion(args.slug, args.version);
      return { drop, versions, ...(version === undefined ? {} : { version }) };
    }),
  );
}
