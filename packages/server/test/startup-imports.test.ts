/**
 * What the service loads at start-up (docs/architecture.md, "Process lifecycle"): the MCP SDK, Express and the MCP
 * tools are loaded on the first request that needs them (http/load-once.ts), never by a static import reachable from
 * the entry point, so the process starts without them. Type-only imports are erased and allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Packages left out of start-up, each loaded by a dynamic `import()` on first use. */
const LOADED_ON_FIRST_USE = [
  '@modelcontextprotocol/sdk',
  'express',
  '@htmldrop/mcp',
  '@htmldrop/client',
  // Previews (docs/decisions/0038-previews-and-embeds.md): the card's rasteriser and the browser's driver.
  '@resvg/resvg-js',
  'playwright-core',
  'yazl',
  'yauzl',
];

/** The static imports of a file that are kept at run time (not `import type`, not all-`type` named imports). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const node of source.statements) {
    if ((!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) || node.moduleSpecifier === undefined)
      continue;
    if (ts.isExportDeclaration(node) && node.isTypeOnly) continue;
    const clause = ts.isImportDeclaration(node) ? node.importClause : undefined;
    const named = clause?.namedBindings;
    const typeOnly =
      clause?.isTypeOnly === true ||
      (clause?.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((element) => element.isTypeOnly));
    if (!typeOnly) found.push((node.moduleSpecifier as ts.StringLiteral).text);
  }
  return found;
}

/** Every package imported at run time by the files reachable from `entry` through static imports. */
function packagesAtStart(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of valueImports(file)) {
      if (specifier.startsWith('.')) pending.push(path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'));
      else packages.set(specifier, path.relative(SRC, file));
    }
  }
  return packages;
}

describe('start-up', () => {
  it("loads neither the MCP SDK, Express, the MCP tools and client, nor the previews' renderers", () => {
    const loaded = packagesAtStart(path.join(SRC, 'main.ts'));
    const early = [...loaded]
      .filter(([specifier]) =>
        LOADED_ON_FIRST_USE.some((name) => specifier === name || specifier.startsWith(`${name}/`)),
      )
      .map(([specifier, file]) => `${file} imports ${specifier}`);
    expect(early).toEqual([]);
    // The walk reaches the app and its routes (so an empty answer above means something).
    expect(loaded.has('fastify')).toBe(true);
  });
});
