#!/usr/bin/env node
/**
 * htmldrop: the command line. One function per command; arguments parsed with node:util parseArgs; every failure
 * is one line on stderr and an exit code from exit-codes.ts. Human output on a terminal, JSON when stdout is not a
 * terminal (`--json` / `--human` force either).
 */
import os from 'node:os';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { CLIENT_VERSION, DEFAULT_SERVER, HtmlDropClient, type RetryNotice } from './client.js';
import { type DeviceCodePrompt, type DeviceLoginResult, deviceLogin, waitForDeviceToken } from './device-flow.js';
import { HtmlDropError } from './errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { assertPublishable, checkHtml, documentTitle, type HtmlWarning } from './html-checks.js';
import { openUrl } from './open.js';
import { readTextSource } from './source.js';
import { describeTokenSource, explainTokenError, signInAgainAdvice } from './token-messages.js';
import {
  projectTokenPath,
  type ResolvedToken,
  readTokenFile,
  removeTokenFile,
  requireToken,
  resolveToken,
  TOKEN_ENV,
  userTokenPath,
  writeProjectToken,
  writeTokenFile,
} from './token-store.js';
import type { Drop, Metadata, SortBy, SortOrder, TokenListItem, VersionListItem } from './types.js';
import { describeMatch, upsertDrop } from './upsert.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const GLOBAL_OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  human: { type: 'boolean' },
  retries: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;
/** Global options that take a value (to find the command name before the full parse). */
const GLOBAL_WITH_VALUE = new Set(['--server', '--token', '--retries']);

const METADATA_KEY = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
const SORT_FIELDS: readonly SortBy[] = ['created_at', 'updated_at', 'view_count'];

// ---------------------------------------------------------------------------------------------------------------
// Process plumbing

interface Io {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly home: string;
}

class Output {
  constructor(
    readonly json: boolean,
    private readonly io: Io,
  ) {}

  /** The command's result: one JSON document, or human text, on stdout. */
  result(value: unknown, human: () => string): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = human();
      if (text !== '') this.io.stdout.write(`${text}\n`);
    }
  }

  /** Progress and explanations for the human: stderr, in both modes, so stdout stays parseable. */
  note(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  warn(message: string): void {
    this.io.stderr.write(`htmldrop: warning: ${message}\n`);
  }
}

interface Context {
  readonly io: Io;
  readonly out: Output;
  readonly server: string;
  readonly tokenFlag: string | undefined;
  readonly retries: number;
  /** A client without a token (device flow, public paths). */
  anonymous(): HtmlDropClient;
  /** A client with the resolved token; fails with no_token. */
  authenticated(): Promise<{ client: HtmlDropClient; token: ResolvedToken }>;
  /** The resolved token if there is a usable one, else undefined (no token, or a broken token file). */
  optionalToken(): Promise<ResolvedToken | undefined>;
}

function usage(message: string): HtmlDropError {
  return new HtmlDropError('usage', message);
}

// ---------------------------------------------------------------------------------------------------------------
// Argument helpers

function str(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function bool(values: Values, name: string): boolean {
  return values[name] === true;
}

function list(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function integer(value: string | undefined, flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw usage(
      `${flag} expects a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''} (got "${value}").`,
    );
  }
  return Number(value);
}

/** `k=v` pairs into a metadata map (the service's key rules, checked here for a clearer message). */
function parsePairs(pairs: readonly string[], flag: string): Metadata {
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usage(`${flag} expects key=value (got "${pair}").`);
    const key = pair.slice(0, at);
    const value = pair.slice(at + 1);
    if (!METADATA_KEY.test(key) || key.length > 64) {
      throw usage(
        `${flag}: "${key}" is not a valid metadata key (1-64 of A-Z a-z 0-9 _ . -, starting and ending with a letter, digit or _).`,
      );
    }
    if (value.length > 256) throw usage(`${flag}: the value of "${key}" is longer than 256 characters.`);
    if (key in map && map[key] !== value) throw usage(`${flag}: "${key}" is given twice with different values.`);
    map[key] = value;
  }
  return map;
}

function positional(args: readonly string[], index: number, name: string, command: string): string {
  const value = args[index];
  if (value === undefined || value === '')
    throw usage(`${command}: missing <${name}>. See: htmldrop ${command} --help`);
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Human formatting

function when(ms: number | null): string {
  if (ms === null) return 'never';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

function tags(metadata: Metadata): string {
  const sorted = Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const text = describeMatch(sorted);
  return text === '' ? '-' : text;
}

function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}

function dropDetails(drop: Drop): string {
  const rows: [string, string][] = [
    ['Title', drop.title],
    ['URL', drop.url],
    ['Raw', drop.raw_url],
    ['Slug', drop.slug],
    ['Version', String(drop.latest_version)],
    ['Views', String(drop.view_count)],
    ['Passcode', drop.locked ? 'yes (locked)' : 'no'],
    ['Tags', tags(drop.metadata)],
    ['Created', when(drop.created_at)],
    ['Updated', when(drop.updated_at)],
  ];
  if (drop.description !== '') rows.push(['Description', drop.description]);
  return rows.map(([k, v]) => `${k.padEnd(12)}${v}`).join('\n');
}

function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1_048_576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1_048_576).toFixed(2)} MiB`;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

interface Command {
  readonly usage: string;
  readonly summary: string;
  readonly help: string;
  readonly options: Options;
  readonly run: (ctx: Context, values: Values, args: string[]) => Promise<void>;
}

async function readHtml(ctx: Context, file: string, force: boolean) {
  const source = await readTextSource(file, { stdin: ctx.io.stdin });
  assertPublishable(source.text, { force, name: source.name });
  const warnings = checkHtml(source.text);
  for (const w of warnings) ctx.out.warn(`${source.name}: ${w.message}`);
  return { html: source.text, name: source.name, warnings };
}

async function readContext(file: string | undefined, ctx: Context): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const source = await readTextSource(file, { stdin: ctx.io.stdin, what: 'a text file', maxReadBytes: 1_048_576 });
  return source.text;
}

function publishedText(action: 'created' | 'updated', drop: Drop): string {
  const verb = action === 'created' ? 'Published' : 'Updated';
  return `${verb} "${drop.title}" (version ${drop.latest_version}${drop.locked ? ', passcode' : ''})\n${drop.url}`;
}

function warningsJson(warnings: readonly HtmlWarning[]) {
  return warnings.map(({ code, message }) => ({ code, message }));
}

async function maybeOpen(ctx: Context, url: string): Promise<boolean> {
  const opened = await openUrl(url, { env: ctx.io.env });
  if (!opened) ctx.out.note(`Could not open a browser; open ${url}`);
  return opened;
}

const login: Command = {
  usage: 'login [--label <text>] [--project] [--open] [--no-wait | --poll-token <token>]',
  summary: 'Sign in with the device flow and store the token (0600)',
  help: `Starts the device-code flow: prints a URL and a code for a human to approve in a browser, waits (with a
countdown) until they do, then stores the token in ~/.config/htmldrop/token (or ./.htmldrop/token with --project),
mode 0600 in a 0700 directory.

  --label <text>        name of the token (default "htmldrop CLI on <host>")
  --project             store in ./.htmldrop/token (project-local, with a .gitignore) instead
  --open                also try to open the URL in a browser
  --no-wait             print the URL, code and poll token, and exit; finish later with --poll-token
  --poll-token <token>  resume waiting for a flow started with --no-wait`,
  options: {
    label: { type: 'string' },
    project: { type: 'boolean' },
    open: { type: 'boolean' },
    'no-wait': { type: 'boolean' },
    'poll-token': { type: 'string' },
  },
  async run(ctx, values) {
    const client = ctx.anonymous();
    const label = str(values, 'label') ?? `htmldrop CLI on ${os.hostname()}`;
    if (bool(values, 'no-wait')) {
      const start = await client.startDeviceFlow(label);
      ctx.out.result(start, () =>
        [
          `Open ${start.verification_url}`,
          `and approve the code ${start.code} (valid ${Math.round(start.expires_in / 60)} minutes). Then run:`,
          `  htmldrop login --poll-token ${start.poll_token}${bool(values, 'project') ? ' --project' : ''}`,
        ].join('\n'),
      );
      return;
    }
    const controller = new AbortController();
    const onSignal = () => controller.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let stopCountdown = () => {};
    let result: DeviceLoginResult;
    try {
      const onCode = async (prompt: DeviceCodePrompt) => {
        ctx.out.note(
          [
            '',
            'To sign in, open this URL in a browser:',
            '',
            `    ${prompt.verificationUrl}`,
            '',
            `check that the page shows the code ${prompt.code}, and press Approve.`,
            '',
          ].join('\n'),
        );
        if (bool(values, 'open')) await maybeOpen(ctx, prompt.verificationUrl);
        stopCountdown = startCountdown(ctx.io.stderr, prompt.expiresAt);
      };
      const pollToken = str(values, 'poll-token');
      result =
        pollToken === undefined
          ? await deviceLogin(client, { label, onCode, signal: controller.signal })
          : await waitForDeviceToken(client, {
              pollToken,
              signal: controller.signal,
              expiresAt: Date.now() + 600_000,
            });
    } finally {
      stopCountdown();
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
    const project = bool(values, 'project');
    const file = project ? await writeProjectToken(ctx.io.cwd, result.apiToken) : userTokenPath(ctx.io.home);
    if (!project) await writeTokenFile(file, result.apiToken);
    const me = await client.withToken(result.apiToken).me();
    if (!project && (await readTokenFile(projectTokenPath(ctx.io.cwd)).catch(() => 'broken')) !== undefined) {
      ctx.out.warn(`${projectTokenPath(ctx.io.cwd)} exists and takes precedence over ${file} in this directory.`);
    }
    if (!project && (ctx.io.env[TOKEN_ENV] ?? '') !== '') {
      ctx.out.warn(`${TOKEN_ENV} is set and takes precedence over ${file}.`);
    }
    ctx.out.result(
      {
        user_id: me.user_id,
        login: me.login,
        provider: me.provider,
        token_id: me.token.id,
        token_path: file,
        server: ctx.server,
      },
      () =>
        `Signed in as ${me.login} (${me.provider}, ${me.user_id}). Token ${me.token.id} saved to ${file} (mode 0600).`,
    );
  },
};

/** A countdown on stderr: rewritten in place on a terminal, a line every 30 s otherwise. Returns its stop. */
function startCountdown(stderr: NodeJS.WriteStream, expiresAt: number): () => void {
  const left = () => Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000));
  const clock = (s: number) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  if (stderr.isTTY) {
    const draw = () => stderr.write(`\r\x1b[KWaiting for approval... ${clock(left())} left (Ctrl-C to cancel)`);
    draw();
    const timer = setInterval(draw, 1000);
    return () => {
      clearInterval(timer);
      stderr.write('\r\x1b[K');
    };
  }
  stderr.write(`Waiting for approval... ${left()} s left\n`);
  const timer = setInterval(() => stderr.write(`Waiting for approval... ${left()} s left\n`), 30_000);
  return () => clearInterval(timer);
}

const logout: Command = {
  usage: 'logout [--project] [--local-only]',
  summary: 'Revoke the stored token and delete its file',
  help: `Revokes the stored token on the service (it stops working everywhere) and deletes the file. Without
--project it acts on the token file in effect here: ./.htmldrop/token if it exists, else ~/.config/htmldrop/token.
A token given with --token or HTMLDROP_TOKEN is not touched (use: htmldrop revoke <id>).

  --project      act on ./.htmldrop/token
  --local-only   only delete the file; the token keeps working until revoked`,
  options: { project: { type: 'boolean' }, 'local-only': { type: 'boolean' } },
  async run(ctx, values) {
    const projectFile = projectTokenPath(ctx.io.cwd);
    const userFile = userTokenPath(ctx.io.home);
    const candidates = bool(values, 'project') ? [projectFile] : [projectFile, userFile];
    let file: string | undefined;
    let token: string | undefined;
    for (const candidate of candidates) {
      try {
        token = await readTokenFile(candidate);
      } catch {
        // Garbage or too-open permissions: nothing to revoke, but still remove the file.
        token = undefined;
        file = candidate;
        break;
      }
      if (token !== undefined) {
        file = candidate;
        break;
      }
    }
    if (file === undefined) {
      ctx.out.result({ removed: null, revoked: null }, () => 'No stored token to remove.');
      return;
    }
    let revoked: string | null = null;
    if (token !== undefined && !bool(values, 'local-only')) {
      const client = ctx.anonymous().withToken(token);
      try {
        const me = await client.me();
        await client.revokeToken(me.token.id);
        revoked = me.token.id;
      } catch (error) {
        if (!(error instanceof HtmlDropError && (error.code === 'invalid_token' || error.code === 'unauthorized'))) {
          ctx.out.warn(
            `could not revoke the token on the service (${error instanceof Error ? error.message : String(error)}); it keeps working until revoked.`,
          );
        }
      }
    }
    await removeTokenFile(file);
    ctx.out.result({ removed: file, revoked }, () =>
      revoked === null ? `Removed ${file}.` : `Revoked token ${revoked} and removed ${file}.`,
    );
  },
};

const whoami: Command = {
  usage: 'whoami',
  summary: 'Show the account and token in use',
  help: 'Shows the account, the token in use and where it was found.',
  options: {},
  async run(ctx) {
    const { client, token } = await ctx.authenticated();
    const me = await client.me();
    ctx.out.result({ ...me, server: ctx.server, token_source: token.origin }, () =>
      [
        `${me.login} (${me.provider}, ${me.user_id})`,
        `Server   ${ctx.server}`,
        `Token    ${me.token.id}${me.token.label === null ? '' : ` "${me.token.label}"`} from ${token.origin}`,
        `Drops    ${me.drop_count}`,
      ].join('\n'),
    );
  },
};

const publish: Command = {
  usage:
    'publish <file|-> [--title <t>] [--description <d>] [--context-file <f>] [--passcode <p>] [--meta k=v]... [--upsert k=v]... [--force] [--open]',
  summary: 'Publish a standalone HTML document (new drop, or upsert by tags)',
  help: `Uploads one complete, standalone HTML document ("-" reads stdin) and prints its public URL.

  --title <t>           title (default: the document's <title>)
  --description <d>     description (at most 500 characters)
  --context-file <f>    a text file recorded with this version as its context (reasoning trace)
  --passcode <p>        share gate, at least 4 characters
  --meta k=v            owner-only tag; repeat for several
  --upsert k=v          lookup, then mutate: the drop tagged with all these pairs gets a new version; if none has
                        them, a new drop is created with them; if several do, nothing is changed (exit 7).
                        Concurrent upserts on this machine are serialized with a lock file. With --meta, on
                        update the given tags are merged into the drop's tags.
  --force               upload even if the file does not look like HTML
  --open                open the drop in a browser afterwards

Before uploading it warns about what breaks in a standalone document: relative src/href to local files, a missing
<!doctype html>, a size near the 2 MiB limit.`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    passcode: { type: 'string' },
    meta: { type: 'string', multiple: true },
    upsert: { type: 'string', multiple: true },
    force: { type: 'boolean' },
    open: { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const file = positional(args, 0, 'file|-', 'publish');
    if (args.length > 1) throw usage(`publish takes one file (got ${args.length}).`);
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const match = parsePairs(list(values, 'upsert'), '--upsert');
    const { html, name, warnings } = await readHtml(ctx, file, bool(values, 'force'));
    const title = str(values, 'title') ?? documentTitle(html);
    if (title === undefined) throw usage(`--title is required: ${name} has no <title>.`);
    const context = await readContext(str(values, 'context-file'), ctx);
    const description = str(values, 'description');
    const passcode = str(values, 'passcode');
    const { client } = await ctx.authenticated();
    const optional = {
      ...(description === undefined ? {} : { description }),
      ...(context === undefined ? {} : { context }),
      ...(passcode === undefined ? {} : { passcode }),
    };
    let result: { action: 'created' | 'updated'; drop: Drop };
    if (Object.keys(match).length > 0) {
      result = await upsertDrop(
        client,
        { match, html, title, ...optional, ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}) },
        { onWait: () => ctx.out.note(`Waiting for another upsert of ${describeMatch(match)} to finish...`) },
      );
    } else {
      const drop = await client.createDrop({
        title,
        html,
        ...optional,
        ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}),
      });
      result = { action: 'created', drop };
    }
    ctx.out.result({ ...result, warnings: warningsJson(warnings) }, () => publishedText(result.action, result.drop));
    if (bool(values, 'open')) await maybeOpen(ctx, result.drop.url);
  },
};

const update: Command = {
  usage: 'update <slug> <file|-> [--title <t>] [--description <d>] [--context-file <f>] [--meta k=v]... [--force]',
  summary: 'Upload a new version of a drop',
  help: `Uploads a new version of <slug> (same URL, latest_version + 1). "-" reads stdin.

  --title <t>, --description <d>   change them too
  --context-file <f>               context (reasoning trace) of this version
  --meta k=v                       tags to set; merged into the drop's existing tags
  --force                          upload even if the file does not look like HTML`,
  options: {
    title: { type: 'string' },
    description: { type: 'string' },
    'context-file': { type: 'string' },
    meta: { type: 'string', multiple: true },
    force: { type: 'boolean' },
  },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'update');
    const file = positional(args, 1, 'file|-', 'update');
    const meta = parsePairs(list(values, 'meta'), '--meta');
    const { html, warnings } = await readHtml(ctx, file, bool(values, 'force'));
    const context = await readContext(str(values, 'context-file'), ctx);
    const title = str(values, 'title');
    const description = str(values, 'description');
    const { client } = await ctx.authenticated();
    const metadata = Object.keys(meta).length > 0 ? { ...(await client.getDrop(slug)).metadata, ...meta } : undefined;
    const drop = await client.updateDrop(slug, {
      html,
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
      ...(context === undefined ? {} : { context }),
      ...(metadata === undefined ? {} : { metadata }),
    });
    ctx.out.result({ action: 'updated', drop, warnings: warningsJson(warnings) }, () => publishedText('updated', drop));
  },
};

const listCommand: Command = {
  usage: 'list [--meta k=v]... [--sort created_at|updated_at|view_count] [--order asc|desc] [--limit n] [--page n]',
  summary: 'List your drops',
  help: `Lists your drops, newest first.

  --meta k=v     keep drops tagged k=v; repeat for AND
  --sort <f>     created_at (default), updated_at or view_count
  --order <o>    desc (default) or asc
  --limit <n>    at most n drops (default 50; pages are fetched as needed)
  --page <n>     one page of --limit drops (at most 200), from 1`,
  options: {
    meta: { type: 'string', multiple: true },
    sort: { type: 'string' },
    order: { type: 'string' },
    limit: { type: 'string' },
    page: { type: 'string' },
  },
  async run(ctx, values) {
    const metadata = parsePairs(list(values, 'meta'), '--meta');
    const sort = str(values, 'sort');
    if (sort !== undefined && !SORT_FIELDS.includes(sort as SortBy)) {
      throw usage(`--sort is one of ${SORT_FIELDS.join(', ')} (got "${sort}").`);
    }
    const order = str(values, 'order');
    if (order !== undefined && order !== 'asc' && order !== 'desc')
      throw usage(`--order is asc or desc (got "${order}").`);
    const limit = integer(str(values, 'limit'), '--limit', 1) ?? 50;
    const page = integer(str(values, 'page'), '--page', 1);
    const { client } = await ctx.authenticated();
    const query = {
      metadata,
      ...(sort === undefined ? {} : { sortBy: sort as SortBy }),
      ...(order === undefined ? {} : { sortOrder: order as SortOrder }),
    };
    if (page !== undefined && limit > 200) throw usage('--limit is at most 200 with --page.');
    const pageSize = Math.min(limit, 200);
    let data: Drop[] = [];
    let total = 0;
    for (let p = page ?? 1; ; p++) {
      const result = await client.listDrops({ ...query, page: p, pageSize });
      total = result.pagination.total_items;
      data.push(...result.data);
      if (
        page !== undefined ||
        data.length >= limit ||
        p >= result.pagination.total_pages ||
        result.data.length === 0
      ) {
        break;
      }
    }
    data = data.slice(0, limit);
    ctx.out.result({ data, total_items: total }, () => {
      if (data.length === 0) return total === 0 ? 'No drops.' : `No drops on this page (${total} in all).`;
      const rows = [['SLUG', 'VER', 'VIEWS', 'UPDATED', 'TITLE']];
      for (const d of data) {
        const extras = [d.locked ? '[passcode]' : '', Object.keys(d.metadata).length > 0 ? `[${tags(d.metadata)}]` : '']
          .filter((s) => s !== '')
          .join(' ');
        rows.push([
          d.slug,
          String(d.latest_version),
          String(d.view_count),
          when(d.updated_at),
          `${d.title}${extras === '' ? '' : ` ${extras}`}`,
        ]);
      }
      return `${table(rows)}\n${data.length} of ${total} drop${total === 1 ? '' : 's'}`;
    });
  },
};

const show: Command = {
  usage: 'show <slug> [--version n]',
  summary: 'Show a drop (or one version, with its context)',
  help: `Shows a drop's details. With --version n, shows that version's record, context included.`,
  options: { version: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'show');
    const version = integer(str(values, 'version'), '--version', 1);
    const { client } = await ctx.authenticated();
    if (version !== undefined) {
      const record = await client.getVersion(slug, version);
      ctx.out.result(record, () =>
        [
          `Version  ${record.version}${record.is_latest ? ' (latest)' : ''} of ${record.slug}`,
          `Size     ${bytes(record.size_bytes)}`,
          `Created  ${when(record.created_at)}`,
          `Context  ${record.context === null ? '-' : `\n${record.context}`}`,
        ].join('\n'),
      );
      return;
    }
    const drop = await client.getDrop(slug);
    ctx.out.result(drop, () => dropDetails(drop));
  },
};

const versions: Command = {
  usage: 'versions <slug>',
  summary: "List a drop's versions",
  help: 'Lists the versions of a drop, newest first.',
  options: {},
  async run(ctx, _values, args) {
    const slug = positional(args, 0, 'slug', 'versions');
    const { client } = await ctx.authenticated();
    const items: VersionListItem[] = await client.listVersions(slug);
    ctx.out.result(items, () =>
      table([
        ['VERSION', 'SIZE', 'CONTEXT', 'CREATED'],
        ...items.map((v) => [
          `${v.version}${v.is_latest ? ' (latest)' : ''}`,
          bytes(v.size_bytes),
          v.has_context ? 'yes' : '-',
          when(v.created_at),
        ]),
      ]),
    );
  },
};

const rm: Command = {
  usage: 'rm <slug> [--version n]',
  summary: 'Delete a drop, or one of its versions',
  help: `Deletes the drop and all its versions, or with --version n only that version (not the only one: exit 7).`,
  options: { version: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'rm');
    const version = integer(str(values, 'version'), '--version', 1);
    const { client } = await ctx.authenticated();
    if (version !== undefined) {
      const drop = await client.deleteVersion(slug, version);
      ctx.out.result(
        { deleted: 'version', slug, version, drop },
        () => `Deleted version ${version} of ${slug}; the latest is now version ${drop.latest_version}.`,
      );
      return;
    }
    await client.deleteDrop(slug);
    ctx.out.result({ deleted: 'drop', slug }, () => `Deleted ${slug}.`);
  },
};

const passcode: Command = {
  usage: 'passcode <slug> (<value> | - | --remove)',
  summary: 'Set, change or remove the passcode of a drop',
  help: `Sets the passcode (at least 4 characters; "-" reads it from stdin, keeping it out of the process list), or
removes it with --remove. A passcode is a soft share gate, not encryption.`,
  options: { remove: { type: 'boolean' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'passcode');
    const remove = bool(values, 'remove');
    let value = args[1];
    if (remove && value !== undefined) throw usage('passcode: give a value or --remove, not both.');
    if (!remove && value === undefined) throw usage('passcode: give a value, "-" to read it from stdin, or --remove.');
    if (value === '-')
      value = (await readTextSource('-', { stdin: ctx.io.stdin, what: 'a passcode' })).text.split(/\r?\n/)[0] ?? '';
    const { client } = await ctx.authenticated();
    const drop = await client.setPasscode(slug, remove ? '' : (value ?? ''));
    ctx.out.result(drop, () => (drop.locked ? `Passcode set on ${slug}.` : `Passcode removed from ${slug}.`));
  },
};

const tokens: Command = {
  usage: 'tokens',
  summary: 'List your active tokens',
  help: 'Lists the active tokens of your account; * marks the one in use.',
  options: {},
  async run(ctx) {
    const { client } = await ctx.authenticated();
    const items: TokenListItem[] = await client.listTokens();
    ctx.out.result(items, () =>
      table([
        ['ID', 'CREATED', 'LAST USED', 'LABEL'],
        ...items.map((t) => [
          `${t.id}${t.current ? ' *' : ''}`,
          when(t.created_at),
          when(t.last_used_at),
          t.label ?? '-',
        ]),
      ]),
    );
  },
};

const revoke: Command = {
  usage: 'revoke <id>',
  summary: 'Revoke one of your tokens',
  help: 'Revokes a token by its 12-hex id (see: htmldrop tokens). It stops working at once.',
  options: {},
  async run(ctx, _values, args) {
    const id = positional(args, 0, 'id', 'revoke');
    if (!/^[0-9a-f]{12}$/.test(id)) throw usage(`revoke: "${id}" is not a token id (12 lowercase hex characters).`);
    const { client, token } = await ctx.authenticated();
    const current = (await client.me()).token.id === id;
    await client.revokeToken(id);
    ctx.out.result({ revoked: id, current }, () =>
      current
        ? `Revoked ${id}: it was the token in use, from ${describeTokenSource(token)}. ${signInAgainAdvice(token)}`
        : `Revoked ${id}.`,
    );
  },
};

const open: Command = {
  usage: 'open <slug> [--version n] [--raw]',
  summary: 'Open a drop in the browser',
  help: `Opens the drop's viewer page (or with --raw the bare document) in a browser ($BROWSER, open, start or
xdg-open). When none is available it prints the URL.`,
  options: { version: { type: 'string' }, raw: { type: 'boolean' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'open');
    const version = integer(str(values, 'version'), '--version', 1);
    const raw = bool(values, 'raw');
    const found = await ctx.optionalToken();
    let base = raw ? `${ctx.server}/p/${encodeURIComponent(slug)}/raw` : `${ctx.server}/p/${encodeURIComponent(slug)}`;
    if (found !== undefined) {
      // The service's own URL: its public base may differ from the API address (a proxy).
      try {
        const drop = await ctx.anonymous().withToken(found.token).getDrop(slug);
        base = raw ? drop.raw_url : drop.url;
      } catch (error) {
        // Another account's drop is still public: open it by its path.
        if (!(error instanceof HtmlDropError && error.code === 'forbidden')) throw error;
      }
    }
    const url = version === undefined ? base : `${base}?v=${version}`;
    const opened = await openUrl(url, { env: ctx.io.env });
    ctx.out.result({ url, opened }, () => (opened ? `Opened ${url}` : url));
  },
};

const COMMANDS: Readonly<Record<string, Command>> = {
  login,
  logout,
  whoami,
  publish,
  update,
  list: listCommand,
  show,
  versions,
  rm,
  passcode,
  tokens,
  revoke,
  open,
};

function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return `htmldrop ${CLIENT_VERSION}: publish complete, standalone HTML documents at stable public URLs.

Usage: htmldrop [global options] <command> [arguments]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  .join('\n')}

Global options:
  --server <url>   the service (default $HTMLDROP_SERVER, else ${DEFAULT_SERVER})
  --token <token>  token to use (else ./.htmldrop/token, $HTMLDROP_TOKEN, ~/.config/htmldrop/token)
  --json           JSON on stdout (the default when stdout is not a terminal)
  --human          human-readable output (the default on a terminal)
  --retries <n>    retries of a rate-limited (429) request after Retry-After (default 3)
  -h, --help       help; "htmldrop <command> --help" for a command
  --version        the version

Exit codes: 0 ok, 1 unexpected, 2 usage or bad input, 3 authentication, 4 not found or forbidden,
5 limits (429, quota), 6 service unreachable or bad answer, 7 conflict, 130 interrupted.`;
}

function commandHelp(command: Command): string {
  return `Usage: htmldrop ${command.usage}\n\n${command.summary}.\n\n${command.help}`;
}

/** The first argument that is not a global option or its value. */
function findCommand(argv: readonly string[]): { name: string | undefined; index: number } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') return { name: argv[i + 1], index: i + 1 };
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') return { name: arg, index: i };
  }
  return { name: undefined, index: -1 };
}

// ---------------------------------------------------------------------------------------------------------------
// Main

async function main(argv: readonly string[], io: Io): Promise<number> {
  const { name, index } = findCommand(argv);
  const wantsJson = argv.includes('--json') || (!argv.includes('--human') && io.stdout.isTTY !== true);
  let out = new Output(wantsJson, io);
  /** The token the command's requests carry, once resolved. */
  let tokenInUse: ResolvedToken | undefined;
  try {
    if (name === undefined || name === 'help') {
      if (name === undefined && (argv.includes('--version') || argv.includes('-V'))) {
        io.stdout.write(`${CLIENT_VERSION}\n`);
        return EXIT.ok;
      }
      const topic = name === 'help' ? argv[index + 1] : undefined;
      const command = topic === undefined ? undefined : COMMANDS[topic];
      if (topic !== undefined && command === undefined) throw usage(`Unknown command "${topic}". Run: htmldrop --help`);
      const text = `${command === undefined || topic === undefined ? mainHelp() : commandHelp(command)}\n`;
      if (name === undefined && !argv.includes('--help') && !argv.includes('-h')) {
        io.stderr.write(text);
        return EXIT.usage;
      }
      io.stdout.write(text);
      return EXIT.ok;
    }
    const command = COMMANDS[name];
    if (command === undefined) throw usage(`Unknown command "${name}". Run: htmldrop --help`);
    const rest = [...argv.slice(0, index), ...argv.slice(index + 1)];
    let parsed: { values: Values; positionals: string[] };
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...GLOBAL_OPTIONS, ...command.options },
        allowPositionals: true,
        strict: true,
      }) as { values: Values; positionals: string[] };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw usage(`${name}: ${message.split(/\.\s+To specify/)[0]?.replace(/\s*\n\s*/g, ' ')}`);
    }
    const { values, positionals } = parsed;
    if (bool(values, 'json') && bool(values, 'human')) throw usage('Give --json or --human, not both.');
    out = new Output(bool(values, 'json') || (!bool(values, 'human') && io.stdout.isTTY !== true), io);
    if (bool(values, 'help')) {
      io.stdout.write(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    const server = str(values, 'server') ?? (io.env.HTMLDROP_SERVER?.trim() || DEFAULT_SERVER);
    const retries = integer(str(values, 'retries'), '--retries', 0, 20) ?? 3;
    const tokenFlag = str(values, 'token');
    const clientOptions = {
      maxRetries: retries,
      timeoutMs: 120_000,
      onRetry: (n: RetryNotice) =>
        out.warn(`the service answered 429 ${n.code}; retrying in ${n.waitSeconds} s (${n.attempt}/${retries}).`),
    };
    const anonymous = new HtmlDropClient({ ...clientOptions, server });
    const locations = { flag: tokenFlag, cwd: io.cwd, home: io.home, env: io.env };
    const ctx: Context = {
      io,
      out,
      server: anonymous.server,
      tokenFlag,
      retries,
      anonymous: () => anonymous,
      async authenticated() {
        const token = await requireToken(locations);
        tokenInUse = token;
        return { client: anonymous.withToken(token.token), token };
      },
      async optionalToken() {
        tokenInUse = await resolveToken(locations).catch(() => undefined);
        return tokenInUse;
      },
    };
    await command.run(ctx, values, positionals);
    return EXIT.ok;
  } catch (error) {
    // A 401 for the token in use: say where that token came from and how to sign in again.
    return report(explainTokenError(error, tokenInUse), out, io);
  }
}

function report(error: unknown, out: Output, io: Io): number {
  const code = exitCodeFor(error);
  if (error instanceof HtmlDropError) {
    const retry = error.retryAfterSeconds === undefined ? '' : ` Retry after ${error.retryAfterSeconds} s.`;
    const request =
      error.requestId === undefined || (error.status ?? 0) < 500 ? '' : ` (request id ${error.requestId})`;
    io.stderr.write(`htmldrop: ${error.message}${retry}${request} [${error.code}]\n`);
    if (out.json) io.stdout.write(`${JSON.stringify({ error: error.toJSON(), exit_code: code }, null, 2)}\n`);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`htmldrop: unexpected error: ${message} (please report it; HTMLDROP_DEBUG=1 shows details)\n`);
    if (io.env.HTMLDROP_DEBUG === '1' && error instanceof Error && error.stack !== undefined) {
      io.stderr.write(`${error.stack}\n`);
    }
    if (out.json)
      io.stdout.write(`${JSON.stringify({ error: { code: 'unexpected', message }, exit_code: code }, null, 2)}\n`);
  }
  return code;
}

// A closed pipe (htmldrop list | head) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
});
main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  home: os.homedir(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`htmldrop: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT.unexpected;
  },
);
