/**
 * The SDK and files (docs/api.md, "Many files in one drop"): `files` on createDrop, updateDrop and upsertDrop, a
 * folder read by readFolder(), the files of a version and of a diff, and the service's refusals as HtmlDropErrors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, type HtmlDropClient } from '../src/client.js';
import { HtmlDropError } from '../src/errors.js';
import { exitCodeFor } from '../src/exit-codes.js';
import { filePathProblem, readFileMap, readFolder } from '../src/folder.js';
import { upsertDrop } from '../src/upsert.js';
import { PAGE, tempDir } from './run.js';
import { useService } from './service.js';

const service = useService();
let client: HtmlDropClient;

beforeAll(async () => {
  client = createClient({ server: service.baseUrl, token: await service.mintToken('sdk-files') });
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0, 0xff, 0xfe]);

describe('files through the SDK', () => {
  it('creates, updates and upserts with files; versions and diffs list them', async () => {
    const drop = await client.createDrop({
      title: 'With files',
      html: PAGE('one'),
      files: { 'a.css': { content: 'p{}' }, 'img/x.png': { content: PNG.toString('base64'), encoding: 'base64' } },
    });
    const v1 = await client.getVersion(drop.slug, 1);
    expect(v1.files?.map((f) => [f.path, f.size_bytes, f.content_type])).toEqual([
      ['a.css', 3, 'text/css; charset=utf-8'],
      ['img/x.png', PNG.length, 'image/png'],
    ]);
    expect(v1.total_bytes).toBe(Buffer.byteLength(PAGE('one')) + 3 + PNG.length);
    await client.updateDrop(drop.slug, { html: PAGE('two'), files: { 'a.css': { content: 'p{color:red}' } } });
    expect(await client.diff(drop.slug)).toMatchObject({
      files: { added: [], removed: ['img/x.png'], changed: ['a.css'] },
    });
    const upserted = await upsertDrop(
      client,
      { match: { sdk: 'files' }, title: 'Upserted', html: PAGE('u'), files: { 'data.json': { content: '[]' } } },
      { lockDir: tempDir() },
    );
    expect((await client.listVersions(upserted.drop.slug))[0]?.files?.map((f) => f.path)).toEqual(['data.json']);
  });

  it('reads a folder and files given as paths on disk, and the service refuses what breaks its rules', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'css'));
    fs.writeFileSync(path.join(dir, 'index.html'), PAGE('folder'));
    fs.writeFileSync(path.join(dir, 'css', 'site.css'), 'body{}');
    fs.writeFileSync(path.join(dir, 'logo.png'), PNG);
    const folder = await readFolder(dir);
    expect(folder.entries).toEqual([
      { path: 'css/site.css', size_bytes: 6, encoding: 'text' },
      { path: 'logo.png', size_bytes: PNG.length, encoding: 'base64' },
    ]);
    const drop = await client.createDrop({ title: 'Folder', html: folder.html, files: folder.files });
    const version = await client.getVersion(drop.slug, 1);
    expect(version.files?.map((f) => f.path)).toEqual(['css/site.css', 'logo.png']);
    expect(await readFileMap({ 'img/logo.png': 'logo.png' }, dir)).toEqual({
      'img/logo.png': { content: PNG.toString('base64'), encoding: 'base64' },
    });
    for (const bad of ['', 'a//b', '../x', 'index.html', 'sp ace.png']) expect(filePathProblem(bad), bad).toBeDefined();
    expect(filePathProblem('sub/index.html')).toBeUndefined();
    // The service's own refusal, as the SDK reports it: a 400 with the path, exit code 2 in the CLI.
    const refused = await client
      .createDrop({ title: 't', html: PAGE('x'), files: { '../x': { content: 'x' } } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HtmlDropError);
    expect(refused).toMatchObject({ code: 'invalid_file_path', status: 400, details: { path: '../x' } });
    expect(exitCodeFor(refused)).toBe(2);
  });
});
