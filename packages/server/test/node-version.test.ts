/**
 * One minimum Node.js version (the client's MIN_NODE_VERSION) wherever it is stated: the service's copy for its pages
 * (which may not import the client at start-up), every package.json's
 * `engines`, the landing page, the onboarding text, and every "Node.js N" in the READMEs and docs; and the CLI's
 * launcher refuses an older Node with one line (it needs the build: packages/client/dist).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIN_NODE_VERSION, supportsNode } from '@htmldrop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MIN_NODE_VERSION } from '../src/http/pages/onboard.js';
import { createHarness, type Harness } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('the minimum Node.js version', () => {
  it('is the engines of every package that states one', () => {
    for (const file of ['package.json', 'packages/client/package.json', 'packages/mcp/package.json']) {
      const engines = (JSON.parse(read(file)) as { engines?: { node?: string } }).engines;
      expect(engines?.node, file).toBe(`>=${MIN_NODE_VERSION}`);
    }
  });

  it('is what the landing page and the onboarding text say (the service keeps a copy it holds equal)', async () => {
    expect(CLI_MIN_NODE_VERSION).toBe(MIN_NODE_VERSION);
    const landing = await h.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
    expect(landing.body).toContain(`Node.js ${MIN_NODE_VERSION} or later`);
    const onboard = await h.app.inject({ method: 'GET', url: '/api/onboard' });
    expect(onboard.body).toContain(`Node.js ${MIN_NODE_VERSION} or later`);
    for (const body of [landing.body, onboard.body]) {
      for (const stated of body.matchAll(/Node\.js (\d+(?:\.\d+)*)/g)) expect(stated[1]).toBe(MIN_NODE_VERSION);
    }
  });

  it('is every version the READMEs and docs state', () => {
    const files = [
      'README.md',
      'packages/client/README.md',
      'packages/mcp/README.md',
      ...fs
        .readdirSync(path.join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const stated = files.flatMap((file) =>
      [...read(file).matchAll(/Node\.js (\d+(?:\.\d+)*)/g)].map((match) => `${file}: ${match[1]}`),
    );
    expect(stated.length).toBeGreaterThan(0);
    for (const line of stated) expect(line.endsWith(`: ${MIN_NODE_VERSION}`), line).toBe(true);
  });

  it('is what the CLI asks for: an older Node gets one line and exit 1', () => {
    const older = `data:text/javascript,Object.defineProperty(process, "versions", { value: { ...process.versions, node: "18.20.4" } })`;
    const run = spawnSync(
      process.execPath,
      ['--import', older, path.join(ROOT, 'packages/client/bin/htmldrop.js'), '--version'],
      {
        encoding: 'utf8',
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`htmldrop: needs Node.js ${MIN_NODE_VERSION} or later; this is Node.js 18.20.4.\n`);
    expect(run.stdout).toBe('');
  });

  it('is compared by major and minor', () => {
    expect(supportsNode('20.19.0')).toBe(true);
    expect(supportsNode('20.20.2')).toBe(true);
    expect(supportsNode('22.1.0')).toBe(true);
    expect(supportsNode('20.18.3')).toBe(false);
    expect(supportsNode('18.20.4')).toBe(false);
  });
});
