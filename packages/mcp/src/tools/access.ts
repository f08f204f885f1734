/** The `get_access` and `create_link` tools: who can see a drop (docs/api.md, "Who can see a drop"). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { slug } from './schema.js';

const GET_ACCESS = {
  title: 'Get who opened a drop and who was refused',
  description:
    'The access log of one of your drops and its recipient links. `access` lists, newest first (kept 90 days, no addresses), each view of the viewer and each refusal: {"at" (Unix ms), "outcome": "viewed"|"refused", "reason": null|"sign_in_required"|"not_on_list"|"wrong_passcode"|"link_revoked"|"link_expired", "who": {"kind": "owner"|"person"|"link"|"anonymous", "name": a person\'s username or a link\'s label}, "version": n or null for the latest}. So "Dana\'s link opened v2" is {"outcome":"viewed","who":{"kind":"link","name":"Dana"},"version":2}. `links` lists each recipient link with its views: [{"id","label","views","last_viewed_at","revoked_at","expires_at"}]. `since` (Unix ms) keeps newer entries only.',
  inputSchema: {
    slug,
    since: z.number().int().min(0).optional().describe('Only entries at or after this time (Unix ms).'),
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

const CREATE_LINK = {
  title: 'Create a recipient link for one person',
  description:
    'A secret URL for one person (`label`, e.g. "Dana") that opens your drop for them whatever its visibility and passcode, and counts their views (get_access). Returns {"id","label","url","expires_at",...}: the url is shown only this once; send it to that person. `expires_at` (Unix ms, at least a minute ahead) ends it; otherwise it lasts until revoked (console or CLI).',
  inputSchema: {
    slug,
    label: z.string().min(1).max(100).describe('Who the link is for (1-100 characters), shown in the log.'),
    expires_at: z.number().int().optional().describe('When the link stops working (Unix ms, at least now + 60 s).'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
};

export function registerAccessTools(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('get_access', GET_ACCESS, (args) =>
    guarded(async (client) => {
      const api = await client();
      const [links, access] = await Promise.all([
        api.listLinks(args.slug),
        api.access(args.slug, args.since === undefined ? {} : { since: args.since }),
      ]);
      return { links, access };
    }),
  );
  mcp.registerTool('create_link', CREATE_LINK, (args) =>
    guarded(async (client) =>
      (await client()).createLink(args.slug, {
        label: args.label,
        ...(args.expires_at === undefined ? {} : { expires_at: args.expires_at }),
      }),
    ),
  );
}
