/** The `delete` tool: a whole drop, or one of its versions. */
import { HtmlDropError } from '@htmldrop/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { ifMatch, slug } from './schema.js';

const TOOL = {
  title: 'Delete a drop or one version',
  description:
    'Delete one of your drops with all its versions (its url stops working), or with `version` only that version (the only remaining version cannot be deleted: delete the drop instead). Irreversible. Returns {"deleted":"drop","slug"} or {"deleted":"version","slug","version","drop":{...}}.',
  inputSchema: {
    slug,
    version: z.number().int().min(1).optional().describe('Delete only this version (optional).'),
    if_match: ifMatch
      .optional()
      .describe(
        'Only with a whole drop: delete it only if this is still its latest_version; otherwise nothing is deleted (version_conflict).',
      ),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
};

export function registerDeleteTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('delete', TOOL, (args) =>
    guarded(async (client) => {
      const api = await client();
      if (args.version !== undefined) {
        if (args.if_match !== undefined) {
          throw new HtmlDropError('usage', 'if_match applies to deleting the whole drop, not one version.');
        }
        const drop = await api.deleteVersion(args.slug, args.version);
        return { deleted: 'version', slug: args.slug, version: args.version, drop };
      }
      await api.deleteDrop(args.slug, args.if_match === undefined ? {} : { ifMatch: args.if_match });
      return { deleted: 'drop', slug: args.slug };
    }),
  );
}
