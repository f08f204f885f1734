/** The help texts: `htmldrop --help`, `htmldrop help <command>`, `htmldrop <command> --help`, and `--version`. */
import { CLIENT_VERSION, DEFAULT_SERVER } from '../client.js';
import { EXIT } from '../exit-codes.js';
import { usage } from './args.js';
import { COMMANDS } from './commands/index.js';
import type { Command, Io } from './context.js';

/** The overview: commands, global options, exit codes. */
export function mainHelp(): string {
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

/** One command's help. */
export function commandHelp(command: Command): string {
  return `Usage: htmldrop ${command.usage}\n\n${command.summary}.\n\n${command.help}`;
}

/**
 * No command, or `help [<command>]`: the version (--version, -V), or a help text. Without a command and without
 * --help the overview goes to stderr with the usage exit code. Returns the exit code.
 * @param name undefined (no command) or "help"
 * @param index where `name` stands in argv
 */
export function helpOrVersion(argv: readonly string[], name: string | undefined, index: number, io: Io): number {
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
