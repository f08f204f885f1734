/**
 * Argument parsing for the command line: node:util parseArgs, typed readers of its values, `k=v` metadata pairs
 * (the key rules of docs/api.md section 2.2), and usage errors (exit 2).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { HtmlDropError } from '../errors.js';
import { parseExpires } from '../expires.js';
import { parseNetwork } from '../network.js';
import type { CommentSetting, Metadata, NetworkPolicy, Visibility } from '../types.js';

/** The option table of a command, as node:util parseArgs takes it. */
export type Options = NonNullable<ParseArgsConfig['options']>;
/** The parsed option values, as node:util parseArgs returns them. */
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const METADATA_KEY = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/** A usage error: bad arguments, exit code 2. */
export function usage(message: string): HtmlDropError {
  return new HtmlDropError('usage', message);
}

/**
 * A string option's value may begin with a dash (a poll token, a label): `--name -value` is read as `--name=-value`
 * when `-value` is not itself one of the command's options, where node:util parseArgs would refuse it as ambiguous.
 */
function joinDashValues(args: string[], options: Options): string[] {
  const known = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    known.add(`--${name}`);
    if (option.short !== undefined) known.add(`-${option.short}`);
  }
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === '--') {
      joined.push(...args.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next?.startsWith('-') && !known.has(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

/**
 * parseArgs, strict, positionals allowed; its complaint becomes one usage line naming the command.
 * @param command the command name, for the message
 * @param args the arguments without the command name
 */
export function parseCommandArgs(
  command: string,
  args: string[],
  options: Options,
): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args: joinDashValues(args, options), options, allowPositionals: true, strict: true }) as {
      values: Values;
      positionals: string[];
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw usage(`${command}: ${message.split(/\.\s+To specify/)[0]?.replace(/\s*\n\s*/g, ' ')}`);
  }
}

/** The value of a string option, or undefined. */
export function str(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether a boolean option was given. */
export function bool(values: Values, name: string): boolean {
  return values[name] === true;
}

/** The values of a repeatable string option (empty when not given). */
export function list(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A whole number from `min` to `max`, or undefined when the option was not given; anything else is a usage error. */
export function integer(
  value: string | undefined,
  flag: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw usage(
      `${flag} expects a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''} (got "${value}").`,
    );
  }
  return Number(value);
}

/** `k=v` pairs into a metadata map (the service's key rules, checked here for a clearer message). */
export function parsePairs(pairs: readonly string[], flag: string): Metadata {
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

/** The positional argument at `index`; missing or empty is a usage error pointing at the command's help. */
export function positional(args: readonly string[], index: number, name: string, command: string): string {
  const value = args[index];
  if (value === undefined || value === '')
    throw usage(`${command}: missing <${name}>. See: htmldrop ${command} --help`);
  return value;
}

const COMMENT_SETTINGS: readonly CommentSetting[] = ['off', 'signed_in', 'open'];

/** The value of --comments, checked, or undefined without it. */
export function commentSetting(values: Values): CommentSetting | undefined {
  const value = str(values, 'comments');
  if (value === undefined) return undefined;
  if (!COMMENT_SETTINGS.includes(value as CommentSetting)) {
    throw usage(`--comments is one of ${COMMENT_SETTINGS.join(', ')} (got "${value}").`);
  }
  return value as CommentSetting;
}

/** Comment ids from a repeatable, comma-separated option (`--resolves c_1,c_2`), without repeats; [] without it. */
export function idList(values: Values, name: string): string[] {
  const ids = list(values, name).flatMap((value) => value.split(','));
  const trimmed = ids.map((id) => id.trim());
  if (trimmed.some((id) => id === '')) throw usage(`--${name} expects comment ids separated by commas (c_...,c_...).`);
  return [...new Set(trimmed)];
}

/** The value of --expires as `expires_at`: Unix ms, null for `never`, undefined without the flag. */
export function expiresOption(values: Values, now = Date.now()): number | null | undefined {
  const value = str(values, 'expires');
  return value === undefined ? undefined : parseExpires(value, now, '--expires');
}

/** The value of --network: `open`, `none` or the origins given, checked; undefined without the flag. */
export function networkOption(values: Values): NetworkPolicy | undefined {
  const value = str(values, 'network');
  return value === undefined ? undefined : parseNetwork(value, '--network');
}

const VISIBILITIES: readonly Visibility[] = ['public', 'signed_in', 'people'];

/**
 * --visibility and --allow (docs/api.md, "Who can see a drop") as the request's fields: `visibility` checked,
 * `allow` from a repeatable, comma-separated list without repeats; an --allow alone makes the drop `people`.
 */
export function visibilityFields(values: Values): { visibility?: Visibility; allow?: string[] } {
  const visibility = str(values, 'visibility');
  if (visibility !== undefined && !(VISIBILITIES as readonly string[]).includes(visibility)) {
    throw usage(`--visibility is one of ${VISIBILITIES.join(', ')} (got "${visibility}").`);
  }
  const entries = list(values, 'allow').flatMap((value) => value.split(','));
  const allow = [...new Set(entries.map((entry) => entry.trim()).filter((entry) => entry !== ''))];
  if (list(values, 'allow').length > 0 && visibility !== undefined && visibility !== 'people') {
    throw usage('--allow names who may see a people drop: use it with --visibility people (or alone).');
  }
  return {
    ...(visibility !== undefined
      ? { visibility: visibility as Visibility }
      : allow.length > 0
        ? { visibility: 'people' as const }
        : {}),
    ...(list(values, 'allow').length > 0 ? { allow } : {}),
  };
}

/** The value of --if-match: the version a write requires to be the latest, or undefined without it. */
export function ifMatchOption(values: Values): number | undefined {
  return integer(str(values, 'if-match'), '--if-match', 1);
}
