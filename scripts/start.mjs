#!/usr/bin/env node
/**
 * `npm start`: builds when the build is stale (scripts/build-if-stale.mjs), then runs the service, and passes
 * SIGTERM, SIGINT and SIGHUP on to whichever of the two is running, so that stopping `npm start` (systemd, a
 * container's stop, Ctrl-C) stops the service gracefully instead of leaving it running without its parent. npm
 * sends a signal only to its own child, and a shell (dash) running `a && b` dies of it without passing it on: the
 * package.json script therefore `exec`s this launcher, which is then npm's child. Exits as the service did.
 * docs/contributing.md, "Building".
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** A signal arriving again within this time is the same stop (Ctrl-C reaches this process and npm, which forwards it). */
const SAME_STOP_MS = 250;

/** The running step, in a process group of its own so that a signal reaches it (and its children) once, from here. */
let current;
let stopped;
const lastPassed = new Map();

for (const signal of SIGNALS) {
  process.on(signal, () => {
    stopped ??= signal;
    const now = Date.now();
    if (now - (lastPassed.get(signal) ?? 0) < SAME_STOP_MS) return;
    lastPassed.set(signal, now);
    // A second stop later on is passed on too: the service then exits at once, as it does on a second signal.
    if (current !== undefined && current.exitCode === null && current.signalCode === null) {
      process.kill(-current.pid, signal);
    }
  });
}

/** Runs `node <script>` from the repository root; resolves with how it ended. */
function run(script) {
  return new Promise((resolve) => {
    current = spawn(process.execPath, [path.join(ROOT, script)], { cwd: ROOT, stdio: 'inherit', detached: true });
    current.once('error', (error) => {
      process.stderr.write(`npm start: ${error.message}\n`);
      resolve({ code: 1, signal: null });
    });
    current.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** Ends this process as the step ended: its exit status, or the signal that ended it. */
function endAs({ code, signal }) {
  if (signal !== null) {
    for (const name of SIGNALS) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
}

const built = await run('scripts/build-if-stale.mjs');
if (stopped !== undefined || built.code !== 0) endAs(built);
else endAs(await run('packages/server/dist/main.js'));
