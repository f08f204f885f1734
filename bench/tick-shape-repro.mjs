#!/usr/bin/env node
/**
 * The reproduction of the V8 behaviour that packages/server/src/serve/tick-shape.ts works around, runnable on any
 * Node version (build first: `npm run build`). In two fresh processes, one holding a tick entry and one not: schedule
 * ticks, let every entry die, run full GCs, schedule more ticks, then count how many of `process.nextTick`'s
 * property-definition sites went megamorphic (V8's %DebugPrint). `--single-threaded` makes the outcome repeatable.
 *
 * Prints JSON: {"node": version, "unpinned": sites, "pinned": sites}. On Node 20, unpinned > 0 and pinned = 0: the
 * workaround is needed. When unpinned is 0 on every supported version, remove the workaround
 * (docs/decisions/0013-tick-shape-v8-workaround.md).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILT = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../packages/server/dist/serve/tick-shape.js'),
).href;

/** Megamorphic property-definition sites in nextTick after GCs with no entry alive; -1 if V8 printed no feedback. */
export function megamorphicSitesAfterGc(pin) {
  const script = `
    if (${pin}) (await import(${JSON.stringify(BUILT)})).holdTickObject();
    const round = () => new Promise((resolve) => setTimeout(() => {
      for (let i = 0; i < 1000; i++) process.nextTick(() => {});
      setImmediate(resolve);
    }, 1));
    for (let i = 0; i < 5; i++) await round();
    setTimeout(async () => {
      for (let i = 0; i < 8; i++) globalThis.gc();
      for (let i = 0; i < 5; i++) await round();
      %DebugPrint(process.nextTick);
    }, 10);
  `;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--single-threaded', '--input-type=module', '-e', script],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  if (!out.includes('DefineKeyedOwnPropertyInLiteral')) return -1;
  return out.match(/DefineKeyedOwnPropertyInLiteral MEGAMORPHIC/g)?.length ?? 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(
    JSON.stringify({
      node: process.versions.node,
      unpinned: megamorphicSitesAfterGc(false),
      pinned: megamorphicSitesAfterGc(true),
    }),
  );
}
