/** One real htmldrop service per test file, on loopback with a temporary data directory. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type RunningServer, runCli, startServer } from '../../server/test/process.js';
import { writeTokenFile } from '../src/token-store.js';
import { removeTempDirs, type Sandbox, sandbox, tempDir } from './run.js';

export interface Service {
  readonly baseUrl: string;
  readonly dataDir: string;
  /** A new token for `user` (created with the account when missing), from the operator command. */
  mintToken(user: string): Promise<string>;
  /** A sandbox signed in as `user` through a token file in its HOME (login has its own tests). */
  signedIn(user: string): Promise<Sandbox & { token: string }>;
  stop(): Promise<void>;
}

/**
 * The service of a test file: started before its tests, stopped after them (with the temporary directories).
 * Its members are read once the tests run.
 */
export function useService(env: Record<string, string> = {}): Service {
  let started: Service | undefined;
  beforeAll(async () => {
    started = await startService(env);
  });
  afterAll(async () => {
    await started?.stop();
    removeTempDirs();
  });
  const current = (): Service => {
    if (started === undefined) throw new Error('the service is started in beforeAll');
    return started;
  };
  return {
    get baseUrl() {
      return current().baseUrl;
    },
    get dataDir() {
      return current().dataDir;
    },
    mintToken: (user) => current().mintToken(user),
    signedIn: (user) => current().signedIn(user),
    stop: () => current().stop(),
  };
}

export async function startService(env: Record<string, string> = {}): Promise<Service> {
  const dataDir = tempDir('htmldrop-data-');
  const server: RunningServer = await startServer({ HTMLDROP_DATA_DIR: dataDir, ...env });
  const mintToken = async (user: string) => {
    const created = await runCli(['token', 'create', '--user', user], { ...env, HTMLDROP_DATA_DIR: dataDir });
    if (created.code !== 0) throw new Error(`token create failed: ${created.stderr}`);
    return created.stdout.trim();
  };
  return {
    baseUrl: server.baseUrl,
    dataDir,
    mintToken,
    async signedIn(user) {
      const token = await mintToken(user);
      const box = sandbox(server.baseUrl);
      await writeTokenFile(path.join(box.home, '.config', 'htmldrop', 'token'), token);
      return { ...box, token };
    },
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One clear line on stderr matching `pattern`, never a stack trace. */
export function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}
