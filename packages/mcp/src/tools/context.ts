/**
 * What every tool call shares: the client and its token resolution (the same as the CLI's), the reading of the
 * document to publish, and the JSON results. Built once per MCP server by `createToolContext`.
 */
import os from 'node:os';
import path from 'node:path';
import {
  assertPublishable,
  checkHtml,
  explainTokenError,
  HtmlDropClient,
  HtmlDropError,
  type HtmlWarning,
  type ResolvedToken,
  readTextSource,
  requireToken,
} from '@htmldrop/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorResult } from './errors.js';

export interface ToolOptions {
  /** Base URL of the service. */
  readonly server: string;
  /** A `--token` given to the MCP server; else ./.htmldrop/token, HTMLDROP_TOKEN, ~/.config/htmldrop/token. */
  readonly token?: string | undefined;
  /** Base of ./.htmldrop/token and of relative `file` paths; default process.cwd(). */
  readonly cwd?: string;
}

/** The `html` or `file` of a publish or update call. */
export interface DocumentInput {
  readonly html?: string | undefined;
  readonly file?: string | undefined;
}

export interface ToolContext {
  /**
   * Runs one tool call. `client()` resolves the token on every call, so a `htmldrop login` after the MCP server
   * started is picked up; when the service refuses that token, the error names where it came from and how to sign
   * in again (the same wording as the CLI's).
   */
  guarded(run: (client: () => Promise<HtmlDropClient>) => Promise<unknown>): Promise<CallToolResult>;
  /** The document given as `html` or as a `file` path, checked as the CLI checks it, with its warnings. */
  documentOf(input: DocumentInput): Promise<{ html: string; warnings: HtmlWarning[] }>;
}

function text(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

export function warningsJson(warnings: readonly HtmlWarning[]) {
  return warnings.map(({ code, message }) => ({ code, message }));
}

async function readDocument(cwd: string, input: DocumentInput) {
  if ((input.html === undefined) === (input.file === undefined)) {
    throw new HtmlDropError('usage', 'Give exactly one of html (the document text) or file (a path).');
  }
  let html: string;
  let name = 'The document';
  if (input.file !== undefined) {
    const source = await readTextSource(path.resolve(cwd, input.file));
    html = source.text;
    name = source.name;
  } else {
    html = input.html ?? '';
  }
  assertPublishable(html, { name });
  return { html, warnings: checkHtml(html) };
}

export function createToolContext(options: ToolOptions): ToolContext {
  const cwd = options.cwd ?? process.cwd();
  const base = new HtmlDropClient({ server: options.server, maxRetries: 3, maxRetryWaitSeconds: 30 });
  return {
    async guarded(run) {
      let token: ResolvedToken | undefined;
      const client = async () => {
        token = await requireToken({ flag: options.token, cwd, home: os.homedir(), env: process.env });
        return base.withToken(token.token);
      };
      try {
        return text(await run(client));
      } catch (error) {
        return errorResult(explainTokenError(error, token), base.server);
      }
    },
    documentOf: (input) => readDocument(cwd, input),
  };
}
