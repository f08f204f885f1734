#!/usr/bin/env node
// htmldrop-mcp: committed launcher, so npm links this program at install time on a fresh clone (a bin pointing into dist/
// would not exist yet, and npx would then look for a package of that name on the registry). The program itself
// is the compiled main.js; the root `prepare` script builds it during `npm install` (docs/decisions/0014-workspace-launchers.md).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'htmldrop-mcp: not built yet (no dist/main.js). Run `npm run build` at the root of the htmldrop repository.\n',
  );
  process.exit(1);
}
await import(entry.href);
