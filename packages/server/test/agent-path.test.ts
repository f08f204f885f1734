/**
 * The onboarding's fastest path, as an agent on another machine would take it: the CLI fetched from the service
 * itself with npx (no registry, empty npm cache and home), device-flow login, publish, then the public URL.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { approveAsHuman } from './human.js';
import { type RunningServer, startServer } from './process.js';

let server: RunningServer;
let dataDir: string;
let home: string;

beforeAll(async () => {
  dataDir = tempDir();
  home = tempDir('htmldrop-agent-home-');
  server = await startServer({ HTMLDROP_DATA_DIR: dataDir });
});
afterAll(async () => {
  await server.stop();
  for (const dir of [dataDir, home]) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh machine: only PATH, an empty home and npm cache, and the service's address. */
const agentEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: home,
  npm_config_cache: path.join(home, '.npm'),
  npm_config_update_notifier: 'false',
  HTMLDROP_SERVER: server.baseUrl,
});

/** `npx --yes --package=<base>/cli/htmldrop.tgz htmldrop <args>` in a fresh home, as the onboarding text says. */
function htmldrop(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['--yes', `--package=${server.baseUrl}/cli/htmldrop.tgz`, 'htmldrop', ...args],
      {
        cwd: home,
        env: agentEnv(),
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

describe('the onboarding fast path', () => {
  it('is described by /api/onboard and /llms.txt', async () => {
    const onboard = await (await fetch(`${server.baseUrl}/api/onboard`)).text();
    expect(onboard).toContain(`npx --yes --package=${server.baseUrl}/cli/htmldrop.tgz htmldrop`);
    expect(await (await fetch(`${server.baseUrl}/llms.txt`)).text()).toContain('/cli/htmldrop.tgz');
  });

  it('takes an agent from nothing to a published URL', async () => {
    await signIn();
    expect(fs.statSync(path.join(home, '.config/htmldrop/token')).mode & 0o777).toBe(0o600);

    fs.writeFileSync(
      path.join(home, 'report.html'),
      '<!doctype html><html><head><title>R</title></head><body><h1>Report</h1></body></html>',
    );
    const published = await htmldrop(['publish', 'report.html', '--title', 'Report']);
    expect(published.code, published.stderr).toBe(0);
    const { drop } = JSON.parse(published.stdout) as { drop: { url: string; raw_url: string } };
    expect(drop.url).toMatch(new RegExp(`^${server.baseUrl}/p/[0-9A-Za-z]{10}$`));
    expect((await fetch(drop.url)).status).toBe(200);
    expect(await (await fetch(drop.raw_url)).text()).toContain('<h1>Report</h1>');
  }, 90_000);

  it('runs the MCP server the service hands out (npx, no registry) and publishes through it', async () => {
    const onboard = await (await fetch(`${server.baseUrl}/api/onboard`)).text();
    const command = `npx --yes --package=${server.baseUrl}/mcp/htmldrop-mcp.tgz htmldrop-mcp`;
    expect(onboard).toContain(command);
    expect(await (await fetch(`${server.baseUrl}/llms.txt`)).text()).toContain(command);
    if (!fs.existsSync(path.join(home, '.config/htmldrop/token'))) await signIn();
    // As an MCP client registers it: the command from the onboarding text, the same token file as the CLI.
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['--yes', `--package=${server.baseUrl}/mcp/htmldrop-mcp.tgz`, 'htmldrop-mcp'],
      env: agentEnv(),
      cwd: home,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'agent-path-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'create_link',
        'delete',
        'diff',
        'get',
        'get_access',
        'get_feedback',
        'get_stats',
        'list',
        'publish',
        'resolve_comment',
        'restore',
        'search',
        'update',
      ]);
      const html = '<!doctype html><html><head><title>M</title></head><body><h1>Via MCP</h1></body></html>';
      const result = await client.callTool({ name: 'publish', arguments: { title: 'Via MCP', html } });
      const text = (result.content as { type: string; text: string }[])[0]?.text ?? 'null';
      expect(result.isError, text).not.toBe(true);
      const { drop } = JSON.parse(text) as { drop: { url: string; raw_url: string } };
      expect(drop.url).toMatch(new RegExp(`^${server.baseUrl}/p/[0-9A-Za-z]{10}$`));
      expect(await (await fetch(drop.raw_url)).text()).toContain('<h1>Via MCP</h1>');
    } finally {
      await client.close();
    }
  }, 90_000);
});

/** The device flow through the CLI, approved by a human in a browser; stores the token in the fresh home. */
async function signIn(): Promise<void> {
  const started = await htmldrop(['login', '--no-wait', '--label', 'agent box']);
  expect(started.code, started.stderr).toBe(0);
  const flow = JSON.parse(started.stdout) as { verification_url: string; poll_token: string };
  await approveAsHuman(flow.verification_url, 'agent-owner');
  const login = await htmldrop(['login', '--poll-token', flow.poll_token]);
  expect(login.code, login.stderr).toBe(0);
}
