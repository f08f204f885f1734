/**
 * The full-size folder of docs/api.md, "Many files in one drop": 200 files of about 20 MiB published by
 * `htmldrop publish <dir>` in one command, rendered in Chromium with every asset from the drop's own origin, and
 * republished with one file changed, which must store exactly one new body. `npm run bench:folder` does the work
 * (bench/folder.mjs, which also prints the times); this runs it and holds it to its verdict.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

it('publishes 200 files of 20 MiB in one command; every asset renders; one changed file is one new body', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_FOLDER_FILES: '200', BENCH_FOLDER_MIB: '20' };
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'bench', 'folder.mjs')], {
    cwd: ROOT,
    env,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`bench/folder.mjs failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  expect(stdout).toMatch(/^bench:folder .* 200 files, 19\.\d MiB$/m);
  expect(stdout).toMatch(/^render: \d+ ms to "loaded 149 18 16"; 200 answers from the drop's origin$/m);
  expect(stdout).toMatch(/^update with one file changed \((\d+) B\): \d+ ms; 1 new body of \1 B stored; version 2$/m);
  expect(stdout).toContain('PASS: published in one command');
}, 120_000);
