/**
 * The scanner of the look before publishing (domain/scan.ts is its port; docs/decisions/0034-a-look-before-publishing.md).
 * Its rules and secretlint are imported on the first scan, so a process that takes no write never loads them and
 * start-up pays nothing for them.
 */
import type { Scanner } from '../domain/scan.js';

type Engine = typeof import('./engine.js');

/** A scanner that loads its engine (and secretlint) on first use; every later scan reuses it. */
export function createScanner(): Scanner {
  let engine: Promise<Engine> | undefined;
  return {
    async scan(texts) {
      engine ??= import('./engine.js');
      return (await engine).scanTexts(texts);
    },
  };
}
