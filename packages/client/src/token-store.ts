/**
 * Where tokens live (DECISIONS "Names and conventions"), first match wins:
 *   1. the `--token` flag
 *   2. `./.htmldrop/token` (project-local, relative to the working directory)
 *   3. the `HTMLDROP_TOKEN` environment variable
 *   4. `~/.config/htmldrop/token`
 * Token files are written mode 0600 in a 0700 directory. Like ssh with a private key, a token file that group or
 * others can read is refused rather than used.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HtmlDropError } from './errors.js';

export type TokenSource = 'flag' | 'project' | 'env' | 'user';

export interface ResolvedToken {
  readonly token: string;
  readonly source: TokenSource;
  /** The file it came from (sources project and user). */
  readonly path?: string;
  /** Where it came from, for messages: "--token", "./.htmldrop/token", "HTMLDROP_TOKEN", a path. */
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

/** `hd_` then base62 (DECISIONS "Identifiers": at least 32 random characters and a 6-character checksum). */
const TOKEN_PATTERN = /^hd_[0-9A-Za-z]{16,200}$/;

export function isWellFormedToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function projectTokenPath(cwd: string = process.cwd()): string {
  return path.join(cwd, PROJECT_DIR, TOKEN_FILE);
}

/** ~/.config/htmldrop, the per-user directory (also holds upsert locks). */
export function userConfigDir(home: string = os.homedir()): string {
  return path.join(home, '.config', 'htmldrop');
}

export function userTokenPath(home: string = os.homedir()): string {
  return path.join(userConfigDir(home), TOKEN_FILE);
}

function checkFormat(token: string, origin: string): string {
  if (!isWellFormedToken(token)) {
    const shown = token.length === 0 ? 'it is empty' : `it does not look like hd_<base62>`;
    throw new HtmlDropError('invalid_token', `The token from ${origin} is not an htmldrop token (${shown}).`, {
      details: { origin },
    });
  }
  return token;
}

/**
 * Reads a token file: undefined when it does not exist; HtmlDropError `token_file_permissions` when group or others
 * can read it (or it cannot be read), `invalid_token` when it holds anything but one token.
 */
export async function readTokenFile(file: string): Promise<string | undefined> {
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
      throw new HtmlDropError('invalid_token', `The token path ${file} is not a file.`, { details: { path: file } });
    }
    // spec: the token is a bearer secret; refuse a file others can read, as ssh does for private keys.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      throw new HtmlDropError(
        'token_file_permissions',
        `Permissions ${mode} for the token file ${file} are too open: it must be readable by you only. Run: chmod 600 ${file}`,
        { details: { path: file, mode } },
      );
    }
    if (stat.size > 4096) {
      throw new HtmlDropError('invalid_token', `The token file ${file} is too large to hold a token.`, {
        details: { path: file },
      });
    }
    const text = (await handle.readFile('utf8')).trim();
    return checkFormat(text, file);
  } finally {
    await handle.close();
  }
}

/** Finds the token in the documented order; undefined when there is none anywhere. */
export async function resolveToken(options: ResolveOptions = {}): Promise<ResolvedToken | undefined> {
  if (options.flag !== undefined)
    return { token: checkFormat(options.flag.trim(), '--token'), source: 'flag', origin: '--token' };
  const project = projectTokenPath(options.cwd);
  const fromProject = await readTokenFile(project);
  if (fromProject !== undefined) return { token: fromProject, source: 'project', path: project, origin: project };
  const fromEnv = (options.env ?? process.env)[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    return { token: checkFormat(fromEnv.trim(), TOKEN_ENV), source: 'env', origin: TOKEN_ENV };
  }
  const user = userTokenPath(options.home);
  const fromUser = await readTokenFile(user);
  if (fromUser !== undefined) return { token: fromUser, source: 'user', path: user, origin: user };
  return undefined;
}

/** Like resolveToken, but fails with `no_token` and a message that says where it looked. */
export async function requireToken(options: ResolveOptions = {}): Promise<ResolvedToken> {
  const found = await resolveToken(options);
  if (found !== undefined) return found;
  throw new HtmlDropError(
    'no_token',
    `No token found (looked at --token, ${projectTokenPath(options.cwd)}, ${TOKEN_ENV}, ${userTokenPath(options.home)}). Sign in with: htmldrop login`,
  );
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
