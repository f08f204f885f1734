/**
 * The rooms' dependency rules (docs/architecture.md, "Rooms"): dependencies point inward, the domain is the ground
 * floor, composition happens once at the top. Every import of every source file (tests excepted) is checked against
 * the table below, so an import that crosses a boundary the wrong way fails `npm run check` and `npm test`.
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');
const PACKAGES = path.resolve(import.meta.dirname, '../..');

/** What a room may import inside the server: rooms (folders) and top-level files. Top-level files may import anything. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  domain: ['domain', 'config.ts', 'errors.ts'],
  storage: ['storage', 'domain', 'config.ts', 'errors.ts', 'private-dir.ts', 'built-files.ts', 'release-memory.ts'],
  coordination: ['coordination', 'domain', 'serve', 'config.ts', 'errors.ts'],
  identity: ['identity', 'domain', 'config.ts', 'errors.ts'],
  keys: ['keys', 'domain', 'config.ts', 'private-dir.ts'],
  serve: ['serve', 'domain', 'config.ts', 'errors.ts', 'built-files.ts'],
  scan: ['scan', 'domain', 'config.ts', 'errors.ts'],
  webhooks: ['webhooks', 'domain', 'config.ts', 'errors.ts'],
  portability: ['portability', 'domain', 'config.ts', 'errors.ts'],
  http: [
    'http',
    'domain',
    'serve',
    'keys',
    'identity',
    'portability',
    'config.ts',
    'errors.ts',
    'services.ts',
    'built-files.ts',
  ],
};

/** Packages a room may use besides Node's built-ins; anything else found there is a boundary crossed. */
const MAY_USE: Readonly<Record<string, readonly string[]>> = {
  domain: ['diff', 'mime-types'],
  keys: [],
  serve: ['turndown', 'markdown-it', '@resvg/resvg-js', 'playwright-core'],
  scan: ['@secretlint/secretlint-rule-preset-recommend'],
  webhooks: ['standardwebhooks'],
  portability: ['yazl', 'yauzl', 'ajv'],
};

/** Imports of a room that only name types (erased at run time) and are still allowed. */
const TYPE_ONLY: Readonly<Record<string, readonly string[]>> = { http: ['services.ts'] };

/** Where in the server an import lands: a room (`domain`) or a top-level file (`config.ts`). */
const roomOf = (file: string) => {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length === 1 ? (parts[0] as string).replace(/\.js$/, '.ts') : (parts[0] as string);
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

interface Import {
  readonly specifier: string;
  readonly typeOnly: boolean;
}

/** Every static and dynamic import and re-export of a file, with whether it names types only. */
function importsOf(file: string, text = fs.readFileSync(file, 'utf8')): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      const clause = ts.isImportDeclaration(node) ? node.importClause : undefined;
      const typeOnly = ts.isImportDeclaration(node)
        ? clause?.isTypeOnly === true ||
          (clause?.name === undefined &&
            clause?.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly))
        : node.isTypeOnly;
      found.push({ specifier: (node.moduleSpecifier as ts.StringLiteral).text, typeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const packageOf = (specifier: string) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);
const isBuiltin = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(packageOf(specifier));

/** The crossings of one file: each a readable line for the failure message. */
function crossings(file: string, text?: string): string[] {
  const from = roomOf(file);
  const allowed = MAY_IMPORT[from];
  if (allowed === undefined) return [];
  const name = path.relative(SRC, file);
  const wrong: string[] = [];
  for (const { specifier, typeOnly } of importsOf(file, text)) {
    if (specifier.startsWith('.')) {
      const target = path.resolve(path.dirname(file), specifier);
      if (!target.startsWith(SRC + path.sep)) {
        wrong.push(`${name} imports ${specifier}, outside the server's source`);
        continue;
      }
      const to = roomOf(target);
      const typeOk = typeOnly && (TYPE_ONLY[from] ?? []).includes(to);
      if (!allowed.includes(to) || ((TYPE_ONLY[from] ?? []).includes(to) && !typeOk)) {
        wrong.push(`${name} (${from}) imports ${specifier} (${to})`);
      }
    } else if (!isBuiltin(specifier) && MAY_USE[from] !== undefined && !MAY_USE[from].includes(packageOf(specifier))) {
      wrong.push(`${name} (${from}) uses the package ${packageOf(specifier)}`);
    }
  }
  return wrong;
}

describe('room boundaries', () => {
  const files = sourceFiles(SRC);

  it('finds the rooms it checks', () => {
    const rooms = new Set(files.map(roomOf));
    for (const room of Object.keys(MAY_IMPORT)) expect(rooms).toContain(room);
  });

  it('every import points inward (domain at the bottom, composition at the top)', () => {
    expect(files.flatMap((file) => crossings(file))).toEqual([]);
  });

  it('nothing below the composition root imports the HTTP app or builds the services', () => {
    const wrong = files
      .filter((file) => roomOf(file) !== 'server.ts' && roomOf(file) !== 'cli.ts')
      .flatMap((file) =>
        importsOf(file)
          .filter(({ specifier, typeOnly }) => {
            const target = specifier.startsWith('.') ? path.resolve(path.dirname(file), specifier) : '';
            return (
              (target.endsWith(`${path.sep}http${path.sep}app.js`) && !file.includes(`${path.sep}http${path.sep}`)) ||
              (target === path.join(SRC, 'services.js') && !typeOnly)
            );
          })
          .map(({ specifier }) => `${path.relative(SRC, file)} imports ${specifier}`),
      );
    expect(wrong).toEqual([]);
  });

  it('routes and pages never import the app that registers them', () => {
    const wrong = files
      .filter((file) => /[/\\]http[/\\](routes|pages)[/\\]/.test(file))
      .flatMap((file) =>
        importsOf(file)
          .filter(({ specifier }) => path.resolve(path.dirname(file), specifier) === path.join(SRC, 'http', 'app.js'))
          .map(() => path.relative(SRC, file)),
      );
    expect(wrong).toEqual([]);
  });

  it('the clients never import the server', () => {
    const wrong = ['client', 'mcp'].flatMap((pkg) =>
      sourceFiles(path.join(PACKAGES, pkg, 'src')).flatMap((file) =>
        importsOf(file)
          .filter(({ specifier }) => specifier.includes('@htmldrop/server') || specifier.includes('server/src'))
          .map(({ specifier }) => `${path.relative(PACKAGES, file)} imports ${specifier}`),
      ),
    );
    expect(wrong).toEqual([]);
  });

  it('catches a crossing (the checker itself can fail)', () => {
    const probe = path.join(SRC, 'domain', 'probe.ts');
    const text = "import type { Store } from '../storage/index.js';\nimport Fastify from 'fastify';\n";
    expect(crossings(probe, text)).toEqual([
      'domain/probe.ts (domain) imports ../storage/index.js (storage)',
      'domain/probe.ts (domain) uses the package fastify',
    ]);
    const route = path.join(SRC, 'http', 'routes', 'probe.ts');
    expect(crossings(route, "import { createServices } from '../../services.js';\n")).toEqual([
      'http/routes/probe.ts (http) imports ../../services.js (services.ts)',
    ]);
  });
});
