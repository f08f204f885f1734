/** The `diff` tool: what changed in a drop's HTML between two versions. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from './context.js';
import { slug, version } from './schema.js';

const TOOL = {
  title: "Diff two versions of a drop's HTML",
  description:
    'What changed in one of your drops between two versions: a unified diff of the HTML (---/+++ headers, @@ hunks, +added and -removed lines) and the counts. `to` defaults to the latest version, `from` to the version before `to`; an unknown version is version_not_found. Returns {"from","to","unified","added","removed"}.',
  inputSchema: {
    slug,
    from: version.optional().describe('The older version (default: the one before `to`).'),
    to: version.optional().describe('The newer version (default: the latest).'),
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

export function registerDiffTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('diff', TOOL, (args) =>
    guarded(async (client) =>
      (await client()).diff(args.slug, {
        ...(args.from === undefined ? {} : { from: args.from }),
        ...(args.to === undefined ? {} : { to: args.to }),
      }),
    ),
  );
}
