/** The `publish` tool: a new drop, or with `upsert_by` a new version of the drop carrying those tags. */
import {
  checkNetwork,
  type Drop,
  type DropFiles,
  type HtmlDropClient,
  HtmlDropError,
  parseExpires,
  type UpsertConflict,
  type UpsertOptions,
  upsertDrop,
} from '@htmldrop/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type ToolContext, warningsJson } from './context.js';
import {
  allow,
  commentSetting,
  type DocumentInputSchema,
  expires,
  metadata,
  network,
  resolves,
  STANDALONE_RULE,
  scan,
  visibility,
} from './schema.js';

/** The tool, with the document fields this server takes (schema.ts, `documentInput`). */
const publishTool = (document: DocumentInputSchema) => ({
  title: 'Publish an HTML document',
  description: `Publish a complete, standalone HTML document at a stable public URL and return the drop; share its \`url\`. ${STANDALONE_RULE}

To keep ONE url for a document you regenerate (a report, a dashboard), pass \`upsert_by\` tags, e.g. {"project":"acme","kind":"weekly"}: the drop carrying all of them gets a new version behind the same url; if none does, a new drop with those tags is created; if several do, nothing changes and the error upsert_ambiguous lists them. Concurrent upserts on this machine are serialized; when a writer elsewhere published a version (or created the drop) between the lookup and the write, this document goes on top of it and \`conflicts\` says so: no version is lost.

People can comment in the viewer's Comments panel (\`comments\` sets who may); read their comments with get_feedback, and pass the ids a new version addresses as \`resolves\` (with upsert_by, or on update).

\`network\` limits what the document may load: "none" for sensitive reports (its own requests (fetch, images, scripts, form posts) reach no other site), or the CDN origins it needs.

Returns {"action":"created"|"updated","drop":{slug,url,raw_url,content_url,network,latest_version,expires_at,...},"warnings":[...],"conflicts"?:[{kind,slug,version,message}]}; share drop.url (the viewer). drop.content_url, when not null, is the document on its own origin, where localStorage, IndexedDB and cookies work. Warnings name what may break (relative references to local files, a missing doctype), and what the service found that looks like a secret or personal data (code sensitive_content, with where, line, rule, a masked excerpt and what to change): such a version is public, so publish a corrected one. With \`scan: "block"\` nothing is published when something is found.`,
  inputSchema: {
    ...document,
    title: z.string().min(1).max(200).describe('Title shown on the viewer page (at most 200 characters).'),
    description: z.string().max(500).optional().describe('Optional description (at most 500 characters).'),
    context: z
      .string()
      .optional()
      .describe(
        'Optional reasoning trace recorded with this version (at most 65536 bytes). It is shown publicly on the viewer behind a toggle: no secrets.',
      ),
    passcode: z.string().min(4).optional().describe('Optional share gate (at least 4 characters); not encryption.'),
    metadata: metadata.optional(),
    upsert_by: metadata
      .optional()
      .describe(
        'Tags that identify the drop to update (lookup, then update or create). On update, `metadata` keys are merged into the existing tags.',
      ),
    comments: commentSetting.optional(),
    expires: expires.optional(),
    network: network.optional(),
    visibility: visibility.optional(),
    allow: allow.optional(),
    scan: scan.optional(),
    resolves: resolves
      .optional()
      .describe(
        'With upsert_by: ids of comments (c_..., from get_feedback) the new version addresses; they are marked resolved in it. When no drop carries the tags, nothing is published (usage error).',
      ),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
});

type PublishInput = z.infer<z.ZodObject<ReturnType<typeof publishTool>['inputSchema']>>;

/** Creates the drop, or upserts it when `upsert_by` names at least one tag; `files` go with the document. */
async function publish(
  api: HtmlDropClient,
  args: PublishInput,
  html: string,
  files: DropFiles | undefined,
  lock: UpsertOptions,
) {
  const expiresAt = args.expires === undefined ? undefined : parseExpires(args.expires, Date.now(), 'expires');
  const optional = {
    ...(files === undefined ? {} : { files }),
    ...(args.description === undefined ? {} : { description: args.description }),
    ...(args.context === undefined ? {} : { context: args.context }),
    ...(args.passcode === undefined ? {} : { passcode: args.passcode }),
    ...(args.comments === undefined ? {} : { comments: args.comments }),
    ...(args.network === undefined ? {} : { network: checkNetwork(args.network, 'network') }),
    ...(args.visibility === undefined ? {} : { visibility: args.visibility }),
    ...(args.allow === undefined ? {} : { allow: args.allow }),
    ...(args.scan === undefined ? {} : { scan: args.scan }),
  };
  const upsert = args.upsert_by !== undefined && Object.keys(args.upsert_by).length > 0;
  const resolving = args.resolves !== undefined && args.resolves.length > 0;
  if (resolving && !upsert) {
    throw new HtmlDropError(
      'usage',
      'resolves marks comments resolved in a new version of an existing drop: pass upsert_by too, or call update with its slug.',
    );
  }
  let result: { action: 'created' | 'updated'; drop: Drop; conflicts?: readonly UpsertConflict[] };
  if (upsert && args.upsert_by !== undefined) {
    const { conflicts, ...upserted } = await upsertDrop(
      api,
      {
        match: args.upsert_by,
        html,
        title: args.title,
        ...optional,
        ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
        ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
        ...(resolving && args.resolves !== undefined ? { resolves: args.resolves } : {}),
      },
      lock,
    );
    result = { ...upserted, ...(conflicts.length > 0 ? { conflicts } : {}) };
  } else {
    const drop = await api.createDrop({
      title: args.title,
      html,
      ...optional,
      ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
      ...(expiresAt === undefined || expiresAt === null ? {} : { expires_at: expiresAt }),
    });
    result = { action: 'created', drop };
  }
  return result;
}

export function registerPublishTool(mcp: McpServer, { guarded, documentOf, document, upsert }: ToolContext): void {
  mcp.registerTool('publish', publishTool(document), (args) =>
    guarded(async (client) => {
      const { html, warnings, files } = await documentOf(args);
      const result = await publish(await client(), args, html, files, upsert);
      return { ...result, warnings: warningsJson(warnings, result.drop) };
    }),
  );
}
