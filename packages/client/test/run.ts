/** Running the built `htmldrop` CLI as a user would, in a throwaway HOME and working directory. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { approveDeviceCode } from './human.js';

export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');

const created: string[] = [];

/** A new temporary directory, removed by removeTempDirs(). */
export function tempDir(prefix = 'htmldrop-client-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every directory tempDir() made in this test file (call it in afterAll). */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Sandbox {
  readonly home: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
}

/** A HOME and a working directory of its own; HTMLDROP_* and BROWSER from the outer environment are dropped. */
export function sandbox(server: string, extraEnv: Record<string, string> = {}): Sandbox {
  const home = tempDir('htmldrop-home-');
  const cwd = tempDir('htmldrop-cwd-');
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('HTMLDROP_') && key !== 'BROWSER') env[key] = value;
  }
  return { home, cwd, env: { ...env, HOME: home, HTMLDROP_SERVER: server, ...extraEnv } };
}

export function spawnCli(
  box: Sandbox,
  args: string[],
  env: Record<string, string> = {},
): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [CLI, ...args], { cwd: box.cwd, env: { ...box.env, ...env } });
}

/** Runs `htmldrop <args>` to completion; `stdin` is written then closed. */
export function run(
  box: Sandbox,
  args: string[],
  options: { stdin?: string | Buffer; env?: Record<string, string> } = {},
) {
  return new Promise<Result>((resolve, reject) => {
    const child = spawnCli(box, args, options.env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/** Runs and parses stdout as JSON (stdout is not a terminal: JSON is the default). */
export async function runJson<T = Record<string, unknown>>(box: Sandbox, args: string[], stdin?: string) {
  const result = await run(box, args, stdin === undefined ? {} : { stdin });
  let json: T | undefined;
  try {
    json = JSON.parse(result.stdout) as T;
  } catch {
    json = undefined;
  }
  return { ...result, json: json as T };
}

/**
 * `htmldrop login` with the human played by approveDeviceCode: waits for the URL and code on stderr, approves,
 * then waits for the CLI to exit.
 */
export async function login(
  box: Sandbox,
  username: string,
  args: string[] = [],
  decision: 'approve' | 'deny' = 'approve',
): Promise<Result & { url: string; userCode: string }> {
  const child = spawnCli(box, ['login', ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const shown = await new Promise<{ url: string; userCode: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no verification URL in: ${stderr}`)), 10_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const url = /(https?:\/\/\S+\/verify\?code=\S+)/.exec(stderr)?.[1];
      const userCode = /the code ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(stderr)?.[1];
      if (url !== undefined && userCode !== undefined) {
        clearTimeout(timer);
        resolve({ url, userCode });
      }
    });
    child.once('close', () => reject(new Error(`login exited early: ${stderr}`)));
  });
  await approveDeviceCode(shown.url, username, decision);
  const code = await closed;
  return { code, stdout, stderr, ...shown };
}

export const PAGE = (body: string, title = 'Test page') =>
  `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head><body><p>${body}</p></body></html>\n`;

export function write(dir: string, name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}
