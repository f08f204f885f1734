/** The `get_feedback` tool: comments people left on a drop (or on all the caller's drops), optionally waiting. */
import { type CommentScope, HtmlDropError } from '@htmldrop/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import { slug } from './schema.js';

/**
 * The longest `wait`: under the 60 s after which common MCP clients (the MCP Inspector among them) give up on a
 * request, with room for the answer to arrive. The API itself waits up to 60 s (the CLI's `--wait`).
 */
export const MAX_TOOL_WAIT_SECONDS = 45;

const TOOL = {
  title: 'Get feedback (comments) on drops',
  description: `Get the comments people left on one of your drops (\`slug\`), or on all your drops (\`all: true\`; each comment then names its \`slug\`), oldest first. People comment in the viewer's Comments panel of the drop's url.

The feedback loop: publish, share the url, call get_feedback with \`wait\` (up to ${MAX_TOOL_WAIT_SECONDS} s) to block until someone comments, address the comments in a new version (update, or publish with upsert_by) passing their ids as \`resolves\`, then call get_feedback again with \`since\` = the previous answer's \`next_since\` to get only what is new. The wait stops at ${MAX_TOOL_WAIT_SECONDS} s because many MCP clients give up on a request after 60 s; to wait longer, call again.

Returns {"data":[{id, version, body, quote, author:{name, kind: owner|member|guest}, created_at, resolved_at, resolved_in_version, slug?}...], "next_since": n}; data is [] when nothing came within the wait.`,
  inputSchema: {
    slug: slug.optional().describe('The drop whose comments to get. Give slug or all, not both.'),
    all: z.boolean().optional().describe('true: comments on all your drops.'),
    since: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Only comments created after this time (Unix ms): the next_since of the previous answer. Default 0: all.',
      ),
    wait: z
      .number()
      .int()
      .min(0)
      .max(MAX_TOOL_WAIT_SECONDS)
      .optional()
      .describe(
        `Seconds to wait, when nothing is new yet, for the first new comment (0 to ${MAX_TOOL_WAIT_SECONDS}; default 0; ` +
          'many MCP clients give up on a request after 60 s, so call again to wait longer).',
      ),
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

/** Seconds between progress notifications while waiting (clients may reset their timeout on each). */
const PROGRESS_EVERY_MS = 10_000;

export function registerFeedbackTool(mcp: McpServer, { guarded }: ToolContext): void {
  mcp.registerTool('get_feedback', TOOL, (args, extra) =>
    guarded(async (client) => {
      if ((args.slug === undefined) === (args.all !== true)) {
        throw new HtmlDropError('usage', 'Give slug (one drop) or all: true (every drop of yours), not both.');
      }
      const scope: CommentScope = args.slug ?? { all: true };
      const since = args.since ?? 0;
      const wait = args.wait ?? 0;
      const api = await client();
      const progressToken = extra._meta?.progressToken;
      const started = Date.now();
      const progress =
        progressToken === undefined || wait === 0
          ? undefined
          : setInterval(() => {
              const elapsed = Math.min(wait, Math.round((Date.now() - started) / 1000));
              extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken, progress: elapsed, total: wait, message: 'Waiting for feedback' },
                })
                .catch(() => undefined);
            }, PROGRESS_EVERY_MS);
      try {
        const data = await api.collectComments(scope, { since, waitSeconds: wait, signal: extra.signal });
        return { data, next_since: data.at(-1)?.created_at ?? since };
      } finally {
        if (progress !== undefined) clearInterval(progress);
      }
    }),
  );
}
