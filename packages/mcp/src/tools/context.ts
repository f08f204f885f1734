/**
 * What every tool call shares: the client and its token, the reading of the document to publish, and the JSON
 * results. Two kinds, one set of tools: `createToolContext` for the stdio server (the CLI's token resolution, `html`
 * or a `file` on this machine) and `createHostedToolContext` for the service's remote endpoint (the caller's token,
 * `html` only; docs/api.md "Remote MCP and OAuth").
 */
import os from 'node:os';
import path from 'node:path';
import {
  assertPublishable,
  checkHtml,
  type Drop,
  type DropFiles,
  explainTokenError,
  HtmlDropClient,
  HtmlDropError,
  type HtmlWarning,
  type ResolvedToken,
  readFileMap,
  readFolder,
  readTextSource,
  requireToken,
  type ScanWarning,
  type UpsertOptions,
} from '@htmldrop/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorResult } from './errors.js';
import { type DocumentInputSchema, documentInput } from './schema.js';

export interface ToolOptions {
  /** Base URL of the service. */
  readonly server: string;
  /** A `--token` given to the MCP server; else ./.htmldrop/token, HTMLDROP_TOKEN, ~/.config/htmldrop/token. */
  readonly token?: string | undefined;
  /** Base of ./.htmldrop/token and of relative `file` paths; default process.cwd(). */
  readonly cwd?: string;
}

/**
 * The document of a publish or update call: `html`, a `file` or a `folder` on this machine, and its `files` (paths on
 * disk for the stdio server, contents for the remote one; docs/api.md, "Many files in one drop").
 */
export interface DocumentInput {
  readonly html?: string | undefined;
  readonly file?: string | undefined;
  readonly folder?: string | undefined;
  readonly files?: Readonly<Record<string, unknown>> | undefined;
}

/** A document ready to upload: the HTML, its files when it has any, and what may break. */
export interface CheckedDocument {
  readonly html: string;
  readonly warnings: readonly HtmlWarning[];
  readonly files?: DropFiles;
}

export interface ToolContext {
  /**
   * Runs one tool call. `client()` resolves the token on every call, so a `htmldrop login` after the MCP server
   * started is picked up; when the service refuses that token, the error names where it came from and how to sign
   * in again (the same wording as the CLI's).
   */
  guarded(run: (client: () => Promise<HtmlDropClient>) => Promise<unknown>): Promise<CallToolResult>;
  /** The document given as `html`, a `file` or a `folder`, with its files, checked as the CLI checks it. */
  documentOf(input: DocumentInput): Promise<CheckedDocument>;
  /** The document fields publish and update take here. */
  readonly document: DocumentInputSchema;
  /** Where upserts on this machine take their lock (client-side upsert, docs/api.md). */
  readonly upsert: UpsertOptions;
}

function text(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

export function warningsJson(warnings: readonly HtmlWarning[], drop?: Drop) {
  return [...warnings.map(({ code, message }) => ({ code, message })), ...sensitiveJson(drop?.warnings ?? [])];
}

/** What to change for a finding of the look before publishing (docs/api.md, "A look before publishing"). */
const SENSITIVE_ADVICE =
  'This version is public now. Publish a new version without it (read secrets at run time from the environment or leave them out; replace personal data with aggregates or masked values), tell the user to rotate any key, and delete this version (delete with its version number).';

/**
 * The service's findings in the version just published, as warnings the agent can act on: where, line, rule and the
 * masked excerpt, with what to change. `sensitive_content` is also the error code of a write refused in block mode.
 */
function sensitiveJson(findings: readonly ScanWarning[]) {
  return findings.map((f) => ({
    code: 'sensitive_content',
    message: `${f.where} line ${f.line}: ${f.kind === 'secret' ? 'a secret' : 'personal data'} (${f.rule}): ${f.excerpt}. ${SENSITIVE_ADVICE}`,
    kind: f.kind,
    rule: f.rule,
    where: f.where,
    line: f.line,
    excerpt: f.excerpt,
  }));
}

/** The document as given, checked as the CLI checks it, with its warnings. */
function checkedDocument(html: string, name: string) {
  assertPublishable(html, { name });
  return { html, warnings: checkHtml(html) };
}

async function readDocument(cwd: string, input: DocumentInput): Promise<CheckedDocument> {
  const given = [input.html, input.file, input.folder].filter((value) => value !== undefined).length;
  if (given !== 1) {
    throw new HtmlDropError(
      'usage',
      'Give exactly one of html (the document text), file (a path) or folder (a folder with index.html).',
    );
  }
  if (input.folder !== undefined) {
    if (input.files !== undefined) {
      throw new HtmlDropError('usage', 'A folder brings its own files: give folder, or html or file with files.');
    }
    const folder = await readFolder(path.resolve(cwd, input.folder));
    return { html: folder.html, warnings: folder.warnings, files: folder.files };
  }
  const files =
    input.files === undefined ? undefined : await readFileMap(input.files as Readonly<Record<string, string>>, cwd);
  let html: string;
  let name = 'The document';
  if (input.file !== undefined) {
    const source = await readTextSource(path.resolve(cwd, input.file));
    html = source.text;
    name = source.name;
  } else {
    html = input.html ?? '';
  }
  return withFiles(checkedDocument(html, name), files);
}

/**
 * A document and its files: with files, its relative references are expected to reach them, so that warning of a
 * standalone document is dropped.
 */
function withFiles(document: CheckedDocument, files: DropFiles | undefined): CheckedDocument {
  if (files === undefined) return document;
  return { ...document, warnings: document.warnings.filter((w) => w.code !== 'relative_reference'), files };
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
    document: documentInput(true),
    upsert: {},
  };
}

export interface HostedToolOptions {
  /** The service's client, carrying the token of the request being answered. */
  readonly client: HtmlDropClient;
  /** Serializes upserts in the service's process (one `createUpsertLock()` for all requests). */
  readonly upsertLock: NonNullable<UpsertOptions['serialize']>;
  /** Who calls (the account): upserts are serialized per caller, so that others never wait on them. */
  readonly caller: string;
}

/** An in-process lock per name: each run starts when the previous one of that name has settled. */
export function createUpsertLock(): NonNullable<UpsertOptions['serialize']> {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const previous = tails.get(name) ?? Promise.resolve();
    const current = previous.then(run, run);
    const tail = current.catch(() => undefined);
    tails.set(name, tail);
    try {
      return await current;
    } finally {
      if (tails.get(name) === tail) tails.delete(name);
    }
  };
}

/**
 * The tools' context on the service's remote endpoint: every call uses the caller's token; the document comes only
 * as `html` (a `file` there would be a path on the service's own machine: refused).
 */
export function createHostedToolContext({ client, upsertLock, caller }: HostedToolOptions): ToolContext {
  return {
    async guarded(run) {
      try {
        return text(await run(async () => client));
      } catch (error) {
        return errorResult(error, client.server, 'hosted');
      }
    },
    async documentOf(input) {
      if (input.file !== undefined) {
        throw new HtmlDropError('usage', 'This remote MCP server does not read files: give the document as html.');
      }
      if (input.folder !== undefined) {
        throw new HtmlDropError('usage', 'This remote MCP server does not read folders: give html and files.');
      }
      if (input.html === undefined) throw new HtmlDropError('usage', 'Give html: the complete document text.');
      return withFiles(checkedDocument(input.html, 'The document'), input.files as DropFiles | undefined);
    },
    document: documentInput(false),
    upsert: { serialize: (name, run) => upsertLock(`${caller}:${name}`, run) },
  };
}
