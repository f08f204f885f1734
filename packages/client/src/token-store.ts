/**
 * Where tokens live (docs/api.md, "Client token lookup"), first match wins:
 *   1. the `--token` flag
 *   2. `./.htmldrop/token` (project-local, relative to the working directory)
 *   3. the `HTMLDROP_TOKEN` environment variable
 *   4. `~/.config/htmldrop/token`
 * Token files are written mode 0600 in a 0700 directory. Like ssh with a private key, a token file that group or
 * others can read is refused rather than used. A resolved token says where it came from (`source`, `path`), so a
 * refusal can name the place and how to replace it (token-messages.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HtmlDropError } from './errors.js';
import { describeTokenSource, signInAgainAdvice, type TokenOrigin, tokenSourceLabel } from './token-messages.js';

export type TokenSource = 'flag' | 'project' | 'env' | 'user';

export interface ResolvedToken {
  readonly token: string;
  readonly source: TokenSource;
  /** The file it came from, an absolute path (sources project and user). */
  readonly path?: string;
  /** Where it came from, short: "--token", "HTMLDROP_TOKEN" or the file's path. describeTokenSource() words it. */
  readonly origin: string;
}

export interface TokenLocations {
  /** Base of ./.htmldrop/token; default process.cwd(). */
  readonly cwd?: string;
  /** Base of ~/.config/htmldrop/token; default os.homedir(). */
  readonly home?: string;
  /** Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ResolveOptions extends TokenLocations {
  /** The value of a `--token` flag, if any. */
  readonly flag?: string | undefined;
}

export const TOKEN_ENV = 'HTMLDROP_TOKEN';
export const PROJECT_DIR = '.htmldrop';
const TOKEN_FILE = 'token';

/**
 * `hd_` then base62. The service's tokens are at least 32 random characters and a 6-character checksum; only the
 * service checks the checksum, this is the shape check that catches a wrong value (another service's key, a path).
 */
const TOKEN_PATTERN = /^hd_[0-9A-Za-z]{16,200}$/;

export function isWellFormedToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/** <cwd>/.htmldrop/token, absolute. */
export function projectTokenPath(cwd: string = process.cwd()): string {
  return path.resolve(cwd, PROJECT_DIR, TOKEN_FILE);
}

/** ~/.config/htmldrop, the per-user directory (also holds upsert locks), absolute. */
export function userConfigDir(home: string = os.homedir()): string {
  return path.resolve(home, '.config', 'htmldrop');
}

export function userTokenPath(home: string = os.homedir()): string {
  return path.join(userConfigDir(home), TOKEN_FILE);
}

/** The token, or `invalid_token` naming `where` it came from, with `advice` (how to get a good one) when known. */
function checkFormat(token: string, where: string, advice?: string, details?: Record<string, unknown>): string {
  if (!isWellFormedToken(token)) {
    const shown = token.length === 0 ? 'it is empty' : `it does not look like hd_<base62>`;
    throw new HtmlDropError(
      'invalid_token',
      `The token from ${where} is not an htmldrop token (${shown}).${advice === undefined ? '' : ` ${advice}`}`,
      details === undefined ? {} : { details },
    );
  }
  return token;
}

function checkFrom(token: string, origin: TokenOrigin): string {
  return checkFormat(token, describeTokenSource(origin), signInAgainAdvice(origin), {
    token_source: tokenSourceLabel(origin),
  });
}

/**
 * Reads a token file: undefined when it does not exist; HtmlDropError `token_file_permissions` when group or others
 * can read it (or it cannot be read), `invalid_token` when it holds anything but one token. With `source` (the
 * lookup place the file is), an `invalid_token` message also says how to replace the file.
 */
export async function readTokenFile(file: string, source?: 'project' | 'user'): Promise<string | undefined> {
  const origin: TokenOrigin | undefined = source === undefined ? undefined : { source, path: file };
  const advice = origin === undefined ? '' : ` ${signInAgainAdvice(origin)}`;
  const fileDetails = { path: file, ...(origin === undefined ? {} : { token_source: file }) };
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new HtmlDropError(
      'token_file_permissions',
      `Cannot read the token file ${file} (${code ?? 'error'}). Check its owner and permissions (chmod 600).`,
      { details: { path: file }, cause: error },
    );
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw new HtmlDropError('invalid_token', `The token path ${file} is not a file.`, { details: fileDetails });
    }
    // The token is a bearer secret: refuse a file others can read, as ssh does for private keys.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      throw new HtmlDropError(
        'token_file_permissions',
        `Permissions ${mode} for the token file ${file} are too open: it must be readable by you only. Run: chmod 600 ${file}`,
        { details: { path: file, mode } },
      );
    }
    if (stat.size > 4096) {
      throw new HtmlDropError('invalid_token', `The token file ${file} is too large to hold a token.${advice}`, {
        details: fileDetails,
      });
    }
    const text = (await handle.readFile('utf8')).trim();
    return origin === undefined
      ? checkFormat(text, `the file ${file}`, undefined, fileDetails)
      : checkFrom(text, origin);
  } finally {
    await handle.close();
  }
}

/** Finds the token in the documented order; undefined when there is none anywhere. */
export async function resolveToken(options: ResolveOptions = {}): Promise<ResolvedToken | undefined> {
  if (options.flag !== undefined) {
    return { token: checkFrom(options.flag.trim(), { source: 'flag' }), source: 'flag', origin: '--token' };
  }
  const project = projectTokenPath(options.cwd);
  const fromProject = await readTokenFile(project, 'project');
  if (fromProject !== undefined) return { token: fromProject, source: 'project', path: project, origin: project };
  const fromEnv = (options.env ?? process.env)[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    return { token: checkFrom(fromEnv.trim(), { source: 'env' }), source: 'env', origin: TOKEN_ENV };
  }
  const user = userTokenPath(options.home);
  const fromUser = await readTokenFile(user, 'user');
  if (fromUser !== undefined) return { token: fromUser, source: 'user', path: user, origin: user };
  return undefined;
}

/** The `no_token` message: every place looked at, in order, and how to sign in. */
export function noTokenMessage(options: TokenLocations = {}): string {
  const user = userTokenPath(options.home);
  return (
    `No token found: looked at the --token flag, the file ${projectTokenPath(options.cwd)}, the ${TOKEN_ENV} ` +
    `environment variable and the file ${user}. Run \`htmldrop login\` to sign in; it writes ${user}.`
  );
}

/** Like resolveToken, but fails with `no_token` and a message that says where it looked. */
export async function requireToken(options: ResolveOptions = {}): Promise<ResolvedToken> {
  const found = await resolveToken(options);
  if (found !== undefined) return found;
  throw new HtmlDropError('no_token', noTokenMessage(options), {
    details: { looked_at: ['--token', projectTokenPath(options.cwd), TOKEN_ENV, userTokenPath(options.home)] },
  });
}

/** Makes the directory 0700 (creating it and missing parents). */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') await fs.chmod(dir, 0o700);
}

/**
 * Writes a token file atomically: 0600 file in a 0700 directory (temporary file, then rename, so a reader never
 * sees half a token and the file is never briefly readable by others).
 */
export async function writeTokenFile(file: string, token: string): Promise<void> {
  checkFormat(token, 'the service');
  const dir = path.dirname(file);
  await ensurePrivateDir(dir);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    await fs.writeFile(temp, `${token}\n`, { mode: 0o600, flag: 'wx' });
    if (process.platform !== 'win32') await fs.chmod(temp, 0o600);
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

/** Writes ./.htmldrop/token and a .gitignore beside it, so the token is never committed by accident. */
export async function writeProjectToken(cwd: string, token: string): Promise<string> {
  const file = projectTokenPath(cwd);
  await writeTokenFile(file, token);
  await fs.writeFile(path.join(path.dirname(file), '.gitignore'), '*\n', { flag: 'wx' }).catch(() => undefined);
  return file;
}

/** Removes a token file; false when there was none. */
export async function removeTokenFile(file: string): Promise<boolean> {
  try {
    await fs.unlink(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
