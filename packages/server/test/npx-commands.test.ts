/**
 * No command we print can make npx fetch a package by name from the public registry, where anyone may own the name
 * (docs/decisions/0014-workspace-launchers.md): inside the repository every npx names the local program
 * (`npx --no-install …`); elsewhere it names a tarball the service hands out (`npx --yes --package=<server>/…tgz …`).
 * Checked over the README, the package READMEs, docs/, and the onboarding text, llms.txt and agent card as served.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { agentCard, llmsTxt, onboardMarkdown } from '../src/http/pages/onboard.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The code in a Markdown text: fenced blocks and inline code spans (prose may say "npx never fetches ..."). */
function codeOf(markdown: string): string[] {
  const fences = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? '');
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const spans = [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  return [...fences, ...spans];
}

/** Every `npx` invocation in code that neither stays local nor names a tarball of the service. */
function unsafeNpx(code: string): string[] {
  const found: string[] = [];
  for (const match of code.matchAll(/\bnpx\s+([^\n`"']*)/g)) {
    const args = match[1] ?? '';
    const local = /^--no-install\b/.test(args);
    const tarball = /^--yes --package=\S+\.tgz\s/.test(args);
    const placeholder = args.startsWith('<'); // "never a bare `npx <name>`"
    if (!local && !tarball && !placeholder) found.push(match[0]);
  }
  return found;
}

function unsafeNpxInMarkdown(markdown: string): string[] {
  return codeOf(markdown).flatMap(unsafeNpx);
}

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

describe('npx commands', () => {
  it('the checker catches a bare name and lets the two safe forms through', () => {
    expect(unsafeNpxInMarkdown('run `npx htmldrop-mcp` now')).toEqual(['npx htmldrop-mcp']);
    expect(unsafeNpxInMarkdown('```sh\nnpx htmldrop login\n```\nnpx never fetches')).toEqual(['npx htmldrop login']);
    expect(unsafeNpx('npx --yes htmldrop login')).toEqual(['npx --yes htmldrop login']);
    expect(unsafeNpx('npx --no-install htmldrop login')).toEqual([]);
    expect(unsafeNpx('npx --yes --package=$HTMLDROP_SERVER/cli/htmldrop.tgz htmldrop login')).toEqual([]);
  });

  const documents = [
    path.join(ROOT, 'README.md'),
    ...['client', 'mcp'].map((name) => path.join(ROOT, 'packages', name, 'README.md')),
    ...(fs.existsSync(path.join(ROOT, 'docs')) ? markdownFiles(path.join(ROOT, 'docs')) : []),
    path.join(ROOT, 'bench', 'README.md'),
  ];
  it.each(documents.map((file) => [path.relative(ROOT, file), file]))('%s', (_name, file) => {
    expect(unsafeNpxInMarkdown(fs.readFileSync(file, 'utf8'))).toEqual([]);
  });

  it('the onboarding text, llms.txt and the agent card', () => {
    const config = loadConfig({ HTMLDROP_BASE_URL: 'https://drops.example.com' });
    expect(unsafeNpxInMarkdown(onboardMarkdown(config))).toEqual([]);
    expect(unsafeNpxInMarkdown(llmsTxt(config))).toEqual([]);
    expect(unsafeNpx(JSON.stringify(agentCard(config)))).toEqual([]);
  });
});
