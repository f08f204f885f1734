/** The `update` tool: a new version of a drop given by slug; `metadata` is merged into its tags. */
import { checkNetwork, parseExpires, sameNetwork, withWarningsOf } from '@htmldrop/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type ToolContext, warningsJson } from './context.js';
import {
  allow,
  commentSetting,
  type DocumentInputSchema,
  expires,
  ifMatch,
  metadata,
  network,
  resolves,
  STANDALONE_RULE,
  scan,
  slug,
  visibility,
} from './schema.js';

/** The tool, with the document fields this server takes (schema.ts, `documentInput`). */
const updateTool = (document: DocumentInputSchema) => ({
  title: 'Upload a new version of a drop',
  description: `Upload a new version of an existing drop: same url, latest_version + 1 (older versions stay viewable at url?v=<n>). ${STANDALONE_RULE}

To close the feedback loop, pass the ids of the comments (from get_feedback) this version addresses as \`resolves\`: they are marked resolved in it.

Pass \`if_match\` (the latest_version you based this document on) so that a version someone else published meanwhile is not silently overtaken: the call then fails with version_conflict, and you can diff, merge and try again.

\`comments\`, \`expires\` and \`network\` are changed after the upload, in one more write when they differ from the drop's. \`network: "none"\` suits sensitive reports: its own requests (fetch, images, scripts, form posts) reach no other site.

Returns {"action":"updated","drop":{slug,url,content_url,network,latest_version,...},"warnings":[...]}. Warnings include what the service found that looks like a secret or personal data (code sensitive_content, with where, line, rule, a masked excerpt and what to change); with \`scan: "block"\` nothing is uploaded when something is found.`,
  inputSchema: {
    slug,
    ...document,
    title: z.string().min(1).max(200).optional().describe('New title (optional).'),
    description: z.string().max(500).optional().describe('New description (optional).'),
    context: z
      .string()
      .optional()
      .describe('Reasoning trace for this version (optional, shown publicly behind a toggle).'),
    metadata: metadata.optional().describe('Tags to set; merged into the existing tags (other keys are kept).'),
    resolves: resolves.optional(),
    comments: commentSetting.optional(),
    expires: expires.optional(),
    network: network.optional(),
    visibility: visibility.optional(),
    allow: allow.optional(),
    if_match: ifMatch.optional(),
    scan: scan.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
});

export function registerUpdateTool(mcp: McpServer, { guarded, documentOf, document }: ToolContext): void {
  mcp.registerTool('update', updateTool(document), (args) =>
    guarded(async (client) => {
      const { html, warnings, files } = await documentOf(args);
      const expiresAt = args.expires === undefined ? undefined : parseExpires(args.expires, Date.now(), 'expires');
      const policy = args.network === undefined ? undefined : checkNetwork(args.network, 'network');
      const api = await client();
      const merged =
        args.metadata === undefined ? undefined : { ...(await api.getDrop(args.slug)).metadata, ...args.metadata };
      const put = await api.updateDrop(
        args.slug,
        {
          html,
          ...(files === undefined ? {} : { files }),
          ...(args.title === undefined ? {} : { title: args.title }),
          ...(args.description === undefined ? {} : { description: args.description }),
          ...(args.context === undefined ? {} : { context: args.context }),
          ...(merged === undefined ? {} : { metadata: merged }),
          ...(args.resolves === undefined || args.resolves.length === 0 ? {} : { resolves: args.resolves }),
          ...(args.visibility === undefined ? {} : { visibility: args.visibility }),
          ...(args.allow === undefined ? {} : { allow: args.allow }),
          ...(args.scan === undefined ? {} : { scan: args.scan }),
        },
        args.if_match === undefined ? {} : { ifMatch: args.if_match },
      );
      let drop = put;
      const patch = {
        ...(args.comments !== undefined && args.comments !== drop.comments ? { comments: args.comments } : {}),
        ...(expiresAt !== undefined && expiresAt !== drop.expires_at ? { expires_at: expiresAt } : {}),
        ...(policy !== undefined && !sameNetwork(policy, drop.network ?? 'open') ? { network: policy } : {}),
      };
      if (Object.keys(patch).length > 0) drop = withWarningsOf(put, await api.patchDrop(args.slug, patch));
      return { action: 'updated', drop, warnings: warningsJson(warnings, drop) };
    }),
  );
}
