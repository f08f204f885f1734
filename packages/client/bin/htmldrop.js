#!/usr/bin/env node
// htmldrop: committed launcher, so npm links this program at install time on a fresh clone (a bin pointing into dist/
// would not exist yet, and npx would then look for a package of that name on the registry). The program itself
// is the compiled cli.js; the root `prepare` script builds it during `npm install` (docs/decisions/0014-workspace-launchers.md).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'htmldrop: not built yet (no dist/cli.js). Run `npm run build` at the root of the htmldrop repository.\n',
  );
  process.exit(1);
}
const { MIN_NODE_VERSION, supportsNode } = await import(new URL('../dist/node-version.js', import.meta.url).href);
if (!supportsNode(process.versions.node)) {
  process.stderr.write(
    `htmldrop: needs Node.js ${MIN_NODE_VERSION} or later; this is Node.js ${process.versions.node}.\n`,
  );
  process.exit(1);
}
await import(entry.href);
