#!/usr/bin/env node
/**
 * Runs `npm run build` unless the last build is newer than every input, so `npm start` and `npm test` right after
 * `npm install` (whose `prepare` script built everything) start at once, and a running test suite's dist/ is not
 * rewritten under it. The build writes the stamp last: an interrupted build leaves no stamp and runs again.
 * docs/contributing.md, "Building".
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'packages/server/dist/.build-stamp');

/** What a build reads: sources, build scripts, manifests, compiler settings and the lock file. */
const INPUTS = [
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  ...['server', 'client', 'mcp'].flatMap((name) => [
    `packages/${name}/src`,
    `packages/${name}/package.json`,
    `packages/${name}/tsconfig.build.json`,
    `packages/${name}/README.md`,
  ]),
  'packages/mcp/scripts',
  'packages/server/scripts',
];

function newestMtime(target) {
  let stat;
  try {
    stat = fs.statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its folder's time
  for (const entry of fs.readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

function isStale() {
  if (!fs.existsSync(STAMP)) return true;
  const built = fs.statSync(STAMP).mtimeMs;
  return INPUTS.some((input) => newestMtime(path.join(ROOT, input)) > built);
}

if (isStale()) {
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
