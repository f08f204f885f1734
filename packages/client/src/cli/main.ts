/**
 * htmldrop: the command line. One function per command; arguments parsed with node:util parseArgs; every failure
 * is one line on stderr and an exit code from exit-codes.ts. Human output on a terminal, JSON when stdout is not a
 * terminal (`--json` / `--human` force either).
 */
import os from 'node:os';
import { HtmlDropError } from '../errors.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { explainTokenError } from '../token-messages.js';
import type { ResolvedToken } from '../token-store.js';
import { bool, type Options, parseCommandArgs, usage } from './args.js';
import { COMMANDS } from './commands/index.js';
import { createContext, type Io } from './context.js';
import { findingLines } from './format.js';
import { commandHelp, helpOrVersion } from './help.js';
import { Output } from './output.js';

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

async function main(argv: readonly string[], io: Io): Promise<number> {
  const { name, index } = findCommand(argv);
  const wantsJson = argv.includes('--json') || (!argv.includes('--human') && io.stdout.isTTY !== true);
  let out = new Output(wantsJson, io);
  /** The token the command's requests carry, once resolved. */
  let tokenInUse: ResolvedToken | undefined;
  try {
    if (name === undefined || name === 'help') return helpOrVersion(argv, name, index, io);
    const command = COMMANDS[name];
    if (command === undefined) throw usage(`Unknown command "${name}". Run: htmldrop --help`);
    const rest = [...argv.slice(0, index), ...argv.slice(index + 1)];
    const { values, positionals } = parseCommandArgs(name, rest, { ...GLOBAL_OPTIONS, ...command.options });
    if (bool(values, 'json') && bool(values, 'human')) throw usage('Give --json or --human, not both.');
    out = new Output(bool(values, 'json') || (!bool(values, 'human') && io.stdout.isTTY !== true), io);
    if (bool(values, 'help')) {
      io.stdout.write(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    const ctx = createContext(io, out, values, (token) => {
      tokenInUse = token;
    });
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
    // Refused by the look before publishing: what it found, so the agent knows what to remove.
    for (const line of findingLines(error.details?.findings)) io.stderr.write(`htmldrop:   ${line}\n`);
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

/** Runs the command line on this process's arguments and streams; sets process.exitCode when it ends. */
export function runCli(): void {
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
}
