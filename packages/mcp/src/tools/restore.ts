/** The `restore` tool: publish an old version of a drop again, as its newest version. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from './context.js';
import { ifMatch, slug, version } from './schema.js';

const TOOL = {
  title: 'Restore an old version of a drop',
  description:
    'Make a new version of one of your drops with an old version\'s HTML and context (same url; nothing is deleted, the versions in between stay). Use diff first to see what changed. An unknown version is version_not_found. Returns {"action":"restored","restored_version":n,"drop":{...}} (drop.latest_version is the new version).',
  inputSchema: {
    slug,
    version: version.describe('The version whose HTML and context become the new latest version.'),
    if_match: ifMatch.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
};

export function registerRestoreTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('restore', TOOL, (args) =>
    guarded(async (client) => {
      const options = args.if_match === undefined ? {} : { ifMatch: args.if_match };
      const drop = await (await client()).restore(args.slug, args.version, options);
      return { action: 'restored', restored_version: args.version, drop };
    }),
  );
}
