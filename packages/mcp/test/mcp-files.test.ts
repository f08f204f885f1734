/**
 * The stdio MCP server's publish and update with files (docs/api.md, "Many files in one drop"): a `folder` on this
 * machine (its index.html and the files beside it), or `html`/`file` with `files` given as paths on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE, removeTempDirs, type Sandbox, write } from '../../client/test/run.js';
import { type Service, startService } from '../../client/test/service.js';
import { type Connection, call, connect } from './connection.js';

let service: Service;
let box: Sandbox & { token: string };
let mcp: Connection;

beforeAll(async () => {
  service = await startService();
  box = await service.signedIn('agent');
  mcp = await connect(box);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
  removeTempDirs();
});

/** The paths of a version's files, through the API. */
async function filesOf(slug: string, version: number): Promise<string[]> {
  const answer = await fetch(`${service.baseUrl}/api/drops/${slug}/v/${version}`, {
    headers: { authorization: `Bearer ${box.token}` },
  });
  return ((await answer.json()) as { files: { path: string }[] }).files.map((f) => f.path);
}

describe('publish and update with files', () => {
  it('offers folder and files beside html and file', async () => {
    const { tools } = await mcp.client.listTools();
    for (const name of ['publish', 'update']) {
      const properties = Object.keys(tools.find((t) => t.name === name)?.inputSchema.properties ?? {});
      expect(properties).toEqual(expect.arrayContaining(['html', 'file', 'folder', 'files']));
    }
  });

  it('publishes a folder, then a new version from html with files given as paths on disk', async () => {
    const dir = path.join(box.cwd, 'report');
    fs.mkdirSync(path.join(dir, 'img'), { recursive: true });
    write(dir, 'index.html', PAGE('<img src="img/chart.png">'));
    write(dir, 'img/chart.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    write(dir, '.secret', 'never sent');
    const published = await call(mcp, 'publish', { title: 'Folder', folder: 'report' });
    expect(published.isError, JSON.stringify(published.json)).toBe(false);
    expect(published.json.warnings).toEqual([]);
    const { slug } = published.json.drop;
    expect(await filesOf(slug, 1)).toEqual(['img/chart.png']);
    write(box.cwd, 'chart2.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 9]));
    const updated = await call(mcp, 'update', {
      slug,
      file: 'report/index.html',
      files: { 'img/chart.png': 'chart2.png', 'data/rows.json': 'report/../chart2.png' },
    });
    expect(updated.isError, JSON.stringify(updated.json)).toBe(false);
    expect(await filesOf(slug, 2)).toEqual(['data/rows.json', 'img/chart.png']);
  });

  it('refuses a folder with files, a folder without index.html, a missing file and a bad path', async () => {
    fs.mkdirSync(path.join(box.cwd, 'empty'));
    const cases: [Record<string, unknown>, string][] = [
      [{ title: 'x', folder: 'report', files: { 'a.txt': 'chart2.png' } }, 'usage'],
      [{ title: 'x', folder: 'empty' }, 'no_index'],
      [{ title: 'x', html: PAGE('x'), files: { 'a.png': 'missing.png' } }, 'file_not_found'],
      [{ title: 'x', html: PAGE('x'), files: { '../a.png': 'chart2.png' } }, 'invalid_file_path'],
    ];
    for (const [args, code] of cases) {
      const result = await call(mcp, 'publish', args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(result.json.error.code, JSON.stringify(args)).toBe(code);
    }
  });
});
