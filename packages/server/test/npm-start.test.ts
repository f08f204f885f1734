/**
 * `npm start` as a process manager runs it (systemd, a container's stop): SIGTERM to the npm process stops the
 * service gracefully, the port closes and no service process is left behind (scripts/start.mjs). Needs the build
 * (`npm test` makes sure of it); a stale build would be rebuilt by `npm start` first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './process.js';
import { tempDir } from './temp.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every process whose environment names `dataDir` (the service and anything it started), by pid. */
function processesOf(dataDir: string): number[] {
  const marker = `HTMLDROP_DATA_DIR=${dataDir}\0`;
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (`${fs.readFileSync(`/proc/${entry}/environ`, 'utf8')}\0`.includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Resolves when `check` holds, asking every 100 ms (a process that is not our child gives no event). */
async function until(check: () => Promise<boolean> | boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let npm: ChildProcess | undefined;
let dataDir = '';
afterEach(() => {
  // Whatever a failed test left running: the processes of its own data directory, by pid.
  if (dataDir !== '') for (const pid of processesOf(dataDir)) process.kill(pid, 'SIGKILL');
});

/** `npm start` on a free port with a fresh data directory; its output, and how it ends. */
async function startNpm(options: { detached?: boolean } = {}) {
  dataDir = tempDir();
  const port = await freePort();
  const state = { output: '' };
  npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HTMLDROP_DATA_DIR: dataDir, HTMLDROP_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  npm.stdout?.on('data', (chunk) => {
    state.output += chunk;
  });
  npm.stderr?.on('data', (chunk) => {
    state.output += chunk;
  });
  const child = npm;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await until(() => listening(port), 'the service to listen');
  expect(processesOf(dataDir).length).toBeGreaterThanOrEqual(3); // npm, the launcher, the service
  return { child, port, state, exited };
}

describe('npm start', () => {
  it('stops the service on SIGTERM to npm: the port closes, no service process is left, exit 0', async () => {
    const started = await startNpm();
    started.child.kill('SIGTERM');
    expect(await started.exited, started.state.output).toBe(0);
    expect(await listening(started.port)).toBe(false);
    await until(() => processesOf(dataDir).length === 0, 'every process of this start to end', 10_000);
    expect(started.state.output).toContain('SIGTERM: closing');
  }, 180_000);

  it('Ctrl-C (SIGINT to the whole foreground group) closes the service once, gracefully', async () => {
    const started = await startNpm({ detached: true });
    process.kill(-(started.child.pid ?? 0), 'SIGINT');
    expect(await started.exited, started.state.output).toBe(0);
    expect(await listening(started.port)).toBe(false);
    await until(() => processesOf(dataDir).length === 0, 'every process of this start to end', 10_000);
    expect(started.state.output.match(/SIGINT: closing/g)).toHaveLength(1);
  }, 180_000);

  it('a Ctrl-C while the service starts closes it once it has started, gracefully', async () => {
    // The service itself, signalled as soon as it creates its database in the data directory: start-up (the
    // migrations, the listen) is still under way then, and the handlers must already be in place, or node's default
    // would kill it with the database half set up.
    dataDir = tempDir();
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), HTMLDROP_DATA_DIR: dataDir, HTMLDROP_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const watcher = fs.watch(dataDir, () => {
      watcher.close();
      child.kill('SIGINT');
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    watcher.close();
    expect([code, signal], output).toEqual([0, null]);
    expect(output.match(/SIGINT: closing/g), output).toHaveLength(1);
    expect(output).toContain('Server listening');
    expect(await listening(port)).toBe(false);
  }, 60_000);
});
