#!/usr/bin/env node
/**
 * The start-up bundle (docs/architecture.md, "Building"; docs/decisions/0028-composition-root-ports-and-a-lean-process.md):
 * after `tsc` has written dist/, esbuild bundles the two programs, `src/main.ts` (the service) and `src/cli.ts` (the
 * operator command), with their dependencies into dist/main.js and dist/cli.js, over tsc's files of the same names.
 * Node then reads a few files at start instead of about a thousand modules. What is loaded on first use (drivers,
 * the MCP SDK, the Markdown converter) stays a separate chunk under dist/chunks/, loaded when first imported. The
 * worker threads keep running tsc's files (dist/storage/body-worker.js, dist/serve/markdown-worker.js).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Chunk names carry a content hash: clear the last build's, or they pile up.
fs.rmSync(path.join(PACKAGE, 'dist/chunks'), { recursive: true, force: true });

await build({
  absWorkingDir: PACKAGE,
  entryPoints: { main: 'src/main.ts', cli: 'src/cli.ts' },
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Native code, an optional native driver pg asks for inside a try, and the previews' renderers (native resvg; the
  // browser driver, which finds its own files beside it).
  external: ['better-sqlite3', 'pg-native', '@resvg/resvg-js', 'playwright-core'],
  // Bundled CommonJS packages call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
  // V8 reads all of a module's text before it runs any of it: without comments and indentation the start-up chunk is
  // 1.5 MB instead of 2.2 MB and the service answers its first request about 15 ms sooner (docs/contributing.md,
  // "Building"). Names stay as written, so stack traces read as the sources do.
  minifyWhitespace: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
