/**
 * What a command gets: the process's streams and environment, the output, the service and its clients. Built once
 * per run by main.ts from the global options (--server, --token, --retries).
 */
import { DEFAULT_SERVER, HtmlDropClient, type RetryNotice } from '../client.js';
import { type ResolvedToken, requireToken, resolveToken } from '../token-store.js';
import { integer, type Options, str, type Values } from './args.js';
import type { Output } from './output.js';

/** How many times a create or PUT is sent again after a lost answer or a brief outage (same Idempotency-Key). */
const WRITE_RETRIES = 3;

/** What the CLI says before a retry: a 429, a write whose answer was lost, or a write still running elsewhere. */
function retryMessage(n: RetryNotice, retries: number): string {
  if (n.idempotencyKey === undefined) {
    return `the service answered 429 ${n.code}; retrying in ${n.waitSeconds} s (${n.attempt}/${retries}).`;
  }
  const count = `(${n.attempt}/${WRITE_RETRIES})`;
  if (n.code === 'request_in_progress') {
    return `the same write (Idempotency-Key ${n.idempotencyKey}) is still running on the service; asking again in ${n.waitSeconds} s ${count}.`;
  }
  return `the write failed (${n.code}); sending it again in ${n.waitSeconds} s with the same Idempotency-Key, so it is written once ${count}.`;
}

/** The process plumbing a run works with (the real process in main.ts). */
export interface Io {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly home: string;
}

/** What a command's `run` gets. */
export interface Context {
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

/** One command of the command line: its help and options, and the function that runs it. */
export interface Command {
  readonly usage: string;
  readonly summary: string;
  readonly help: string;
  readonly options: Options;
  readonly run: (ctx: Context, values: Values, args: string[]) => Promise<void>;
}

/**
 * The context of a run from the parsed global options: the server ($HTMLDROP_SERVER, else the default), the 429
 * retries (warned about on stderr) and the token lookup (docs/api.md "Client token lookup").
 * @param onToken told the token the command's requests carry, whenever one is resolved
 */
export function createContext(
  io: Io,
  out: Output,
  values: Values,
  onToken: (token: ResolvedToken | undefined) => void,
): Context {
  const server = str(values, 'server') ?? (io.env.HTMLDROP_SERVER?.trim() || DEFAULT_SERVER);
  const retries = integer(str(values, 'retries'), '--retries', 0, 20) ?? 3;
  const tokenFlag = str(values, 'token');
  const clientOptions = {
    maxRetries: retries,
    timeoutMs: 120_000,
    onRetry: (n: RetryNotice) => out.warn(retryMessage(n, retries)),
    maxWriteRetries: WRITE_RETRIES,
  };
  const anonymous = new HtmlDropClient({ ...clientOptions, server });
  const locations = { flag: tokenFlag, cwd: io.cwd, home: io.home, env: io.env };
  return {
    io,
    out,
    server: anonymous.server,
    tokenFlag,
    retries,
    anonymous: () => anonymous,
    async authenticated() {
      const token = await requireToken(locations);
      onToken(token);
      return { client: anonymous.withToken(token.token), token };
    },
    async optionalToken() {
      const token = await resolveToken(locations).catch(() => undefined);
      onToken(token);
      return token;
    },
  };
}
