#!/usr/bin/env node
/**
 * Packs the MCP server as one self-contained tarball that the service hands out at /mcp/htmldrop-mcp.tgz, so an
 * agent on another machine runs it with `npx --yes --package=<server>/mcp/htmldrop-mcp.tgz htmldrop-mcp`, with no
 * registry and no clone: the built server and everything it imports (the SDK, zod, @htmldrop/client) are bundled
 * into one ES module by esbuild, and the packed package.json has no dependencies.
 *
 *   node packages/mcp/scripts/pack.mjs <destination dir>     (run by `npm run build`, after tsc)
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const destination = process.argv[2];
if (destination === undefined) {
  console.error('usage: node packages/mcp/scripts/pack.mjs <destination dir>');
  process.exit(2);
}

const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));
const stage = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-mcp-pack-'));
try {
  await build({
    entryPoints: [path.join(PACKAGE_DIR, 'dist', 'main.js')],
    outfile: path.join(stage, 'main.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    legalComments: 'inline',
    // CommonJS dependencies inside an ES module bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __htmldropRequire } from 'node:module';\nconst require = __htmldropRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  writeFileSync(
    path.join(stage, 'package.json'),
    `${JSON.stringify(
      {
        name: manifest.name,
        version: manifest.version,
        description: manifest.description,
        type: 'module',
        bin: { 'htmldrop-mcp': 'main.js' },
        engines: manifest.engines,
      },
      null,
      2,
    )}\n`,
  );
  copyFileSync(path.join(PACKAGE_DIR, 'README.md'), path.join(stage, 'README.md'));
  mkdirSync(destination, { recursive: true });
  execFileSync('npm', ['pack', stage, '--pack-destination', destination, '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
} finally {
  rmSync(stage, { recursive: true, force: true });
}
