/**
 * Many files in one drop, over the API (docs/api.md, "Many files in one drop"): `files` on create and PUT, the path
 * rules, the limits and their codes, the files of Version and VersionListItem, diff and restore, the body cap, and
 * what the database holds (each file a body stored once, freed with its last user). Serving is in files-serve.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentBodyLimit } from '../src/http/json-body.js';
import type { Database } from '../src/storage/schema.js';
import { openAtMigration } from './databases.js';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let token: string;
let raw: Kysely<Database>;

const LIMITS = {
  maxWritesPerMinute: 10_000,
  maxWritesPerDay: 10_000,
  maxFilesPerVersion: 5,
  maxVersionBytes: 2_097_152 + 300_000,
};

beforeAll(async () => {
  h = await createHarness({ limits: LIMITS });
  token = await h.token('owner');
  raw = await openAtMigration(h.database, '0015-visibility');
});
afterAll(async () => {
  await raw?.destroy();
  await h?.close();
});

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const b64 = (bytes: Buffer) => ({ content: bytes.toString('base64'), encoding: 'base64' });

async function create(body: Record<string, unknown>) {
  return h.call('POST', '/api/drops', { token, body: { title: 'Folder', html: page('entry'), ...body } });
}

async function created(body: Record<string, unknown>): Promise<string> {
  const reply = await create(body);
  expect(reply.status, reply.text).toBe(201);
  return reply.json.slug;
}

/** What the bodies table holds: rows and stored bytes. */
async function stored() {
  const rows = await raw.selectFrom('bodies').select(['data']).execute();
  return { rows: rows.length, bytes: rows.reduce((sum, row) => sum + row.data.length, 0) };
}

describe('files on create and PUT', () => {
  it('takes text and base64 files, and lists them on the Version and each VersionListItem, sorted by path', async () => {
    const png = randomBytes(3000);
    const css = 'body { color: rebeccapurple }';
    const slug = await created({
      files: {
        'img/chart.png': b64(png),
        'style.css': { content: css },
        'data/rows.json': { content: '[1,2,3]' },
        LICENSE: { content: 'MIT' },
        'sub/index.html': { content: '<p>a page</p>' },
      },
    });
    const version = await h.call('GET', `/api/drops/${slug}/v/1`, { token });
    expect(version.status, version.text).toBe(200);
    const htmlBytes = Buffer.byteLength(page('entry'));
    expect(version.json).toMatchObject({ size_bytes: htmlBytes, is_latest: true });
    expect(version.json.files).toEqual([
      { path: 'LICENSE', size_bytes: 3, content_type: 'application/octet-stream', sha256: sha('MIT') },
      {
        path: 'data/rows.json',
        size_bytes: 7,
        content_type: 'application/json; charset=utf-8',
        sha256: sha('[1,2,3]'),
      },
      { path: 'img/chart.png', size_bytes: 3000, content_type: 'image/png', sha256: sha(png) },
      { path: 'style.css', size_bytes: css.length, content_type: 'text/css; charset=utf-8', sha256: sha(css) },
      {
        path: 'sub/index.html',
        size_bytes: 13,
        content_type: 'text/html; charset=utf-8',
        sha256: sha('<p>a page</p>'),
      },
    ]);
    expect(version.json.total_bytes).toBe(htmlBytes + 3 + 7 + 3000 + css.length + 13);
    const list = await h.call('GET', `/api/drops/${slug}/versions`, { token });
    expect(list.json[0].files).toEqual(version.json.files);
    expect(list.json[0].total_bytes).toBe(version.json.total_bytes);
  });

  it('makes a version complete in itself: a PUT without files has none, and sending the same files again costs nothing', async () => {
    const image = randomBytes(40_000);
    const slug = await created({ files: { 'a.png': b64(image) } });
    const bare = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
    expect(bare.status, bare.text).toBe(200);
    expect((await h.call('GET', `/api/drops/${slug}/v/2`, { token })).json.files).toEqual([]);
    const before = await stored();
    const again = await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: { html: page('entry'), files: { 'a.png': b64(image) } },
    });
    expect(again.status, again.text).toBe(200);
    expect(await stored()).toEqual(before);
    expect((await h.call('GET', `/api/drops/${slug}/v/3`, { token })).json.files[0].sha256).toBe(sha(image));
  });

  it('refuses a bad path with 400 invalid_file_path naming it, and stores nothing', async () => {
    const before = await stored();
    const long = `${'a/'.repeat(127)}bc`;
    expect(Buffer.byteLength(long)).toBe(256);
    for (const path of [
      '',
      '/abs.png',
      'trailing/',
      'a//b.png',
      './a.png',
      'a/../b.png',
      '..',
      'index.html',
      'sp ace.png',
      'back\\slash.png',
      'é.png',
      'q?.png',
      'pct%2e.png',
      long,
    ]) {
      const reply = await create({ files: { [path]: { content: 'x' } } });
      expect([reply.status, reply.json.error.code, reply.json.error.details], path).toEqual([
        400,
        'invalid_file_path',
        { path },
      ]);
    }
    expect(await stored()).toEqual(before);
    const ok = `${'a/'.repeat(126)}bcd`;
    expect(Buffer.byteLength(ok)).toBe(255);
    const fine = await create({
      files: { [ok]: { content: 'x' }, 'sub/index.html': { content: 'y' }, '.well-known/x_y-z.txt': { content: 'z' } },
    });
    expect(fine.status, fine.text).toBe(201);
  });

  it('refuses more files than the limit (too_many_files), bad base64 (invalid_arg naming the path) and bad shapes', async () => {
    const six = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, { content: 'x' }]));
    const many = await create({ files: six });
    expect([many.status, many.json.error.code, many.json.error.details]).toEqual([
      400,
      'too_many_files',
      { max_files: 5 },
    ]);
    for (const content of ['not base64!', 'QUJD=', 'QQ=A', 'Q', 'QUJDRA===', 'QUJ DRA==', 'QUJD\nRA==']) {
      const reply = await create({ files: { 'ok.bin': { content, encoding: 'base64' } } });
      expect([reply.status, reply.json.error.code, reply.json.error.details], content).toEqual([
        400,
        'invalid_arg',
        { field: 'files', path: 'ok.bin' },
      ]);
    }
    for (const files of [
      [],
      'x',
      { 'a.txt': 'text' },
      { 'a.txt': {} },
      { 'a.txt': { content: 1 } },
      { 'a.txt': { content: 'x', encoding: 'utf-8' } },
      { 'a.txt': { content: 'x', extra: true } },
    ]) {
      const reply = await create({ files });
      expect([reply.status, reply.json.error.code, reply.json.error.details?.field], JSON.stringify(files)).toEqual([
        400,
        'invalid_arg',
        'files',
      ]);
    }
    for (const content of ['QUJD', 'QUJDRA==', 'QUJDRA', 'QUJDREU=', '']) {
      const reply = await create({ files: { 'ok.bin': { content, encoding: 'base64' } } });
      expect(reply.status, `${content}: ${reply.text}`).toBe(201);
    }
  });

  it('refuses HTML and files above the version limit with version_too_large; the HTML limit is unchanged', async () => {
    const html = page('').replace('<p></p>', `<p>${'x'.repeat(2_097_152 - page('').length)}</p>`);
    expect(Buffer.byteLength(html)).toBe(2_097_152);
    const fits = await create({ html, files: { 'a.bin': b64(randomBytes(300_000)) } });
    expect(fits.status, fits.text).toBe(201);
    const over = await create({ html, files: { 'a.bin': b64(randomBytes(300_001)) } });
    expect([over.status, over.json.error.code, over.json.error.details.max_bytes]).toEqual([
      400,
      'version_too_large',
      LIMITS.maxVersionBytes,
    ]);
    const put = await h.call('PUT', `/api/drops/${fits.json.slug}`, {
      token,
      body: { html, files: { 'a.bin': { content: 'x'.repeat(300_001) } } },
    });
    expect([put.status, put.json.error.code]).toEqual([400, 'version_too_large']);
    const htmlOver = await create({ html: `${html} `, files: {} });
    expect([htmlOver.status, htmlOver.json.error.code]).toEqual([400, 'html_too_large']);
  });
});

describe('the body cap', () => {
  it('grows for an authenticated writer to fit a full version in base64; an unauthenticated body is refused unread', async () => {
    const cap = documentBodyLimit(h.config.limits);
    expect(cap).toBe(h.config.limits.maxBodyBytes + Math.ceil((LIMITS.maxVersionBytes * 4) / 3) + 5 * 320);
    // Above the HTML's transport cap, within the version's: read, then judged by the version limit.
    const big = JSON.stringify({
      title: 't',
      html: page(),
      files: { 'a.txt': { content: 'x'.repeat(h.config.limits.maxBodyBytes) } },
    });
    const authenticated = await h.call('POST', '/api/drops', { token, rawBody: big });
    expect([authenticated.status, authenticated.json.error.code]).toEqual([400, 'version_too_large']);
    const anonymous = await h.call('POST', '/api/drops', { rawBody: big });
    expect([anonymous.status, anonymous.json.error.code]).toEqual([401, 'unauthorized']);
    const beyond = await h.call('POST', '/api/drops', { token, rawBody: `${big}${' '.repeat(cap)}` });
    expect([beyond.status, beyond.json.error.code, beyond.json.error.details]).toEqual([
      413,
      'html_too_large',
      { max_bytes: 2_097_152, max_body_bytes: cap },
    ]);
  });
});

describe('diff and restore', () => {
  it('diff names the files added, removed and changed between two versions', async () => {
    const slug = await created({
      files: { 'keep.txt': { content: 'same' }, 'edit.css': { content: 'a{}' }, 'gone.js': { content: '1' } },
    });
    await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: {
        html: page('entry'),
        files: { 'keep.txt': { content: 'same' }, 'edit.css': { content: 'b{}' }, 'new/one.png': b64(randomBytes(9)) },
      },
    });
    const forward = await h.call('GET', `/api/drops/${slug}/diff`, { token });
    expect(forward.json).toMatchObject({
      unified: '',
      files: { added: ['new/one.png'], removed: ['gone.js'], changed: ['edit.css'] },
    });
    const back = await h.call('GET', `/api/drops/${slug}/diff?from=2&to=1`, { token });
    expect(back.json.files).toEqual({ added: ['gone.js'], removed: ['new/one.png'], changed: ['edit.css'] });
  });

  it('restore copies the files of the version restored, stored bodies counted once more and not copied', async () => {
    const image = randomBytes(120_000);
    const slug = await created({ files: { 'img/a.png': b64(image), 'app.js': { content: 'go()' } } });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
    const before = await stored();
    const restored = await h.call('POST', `/api/drops/${slug}/v/1/restore`, { token });
    expect([restored.status, restored.json.latest_version]).toEqual([200, 3]);
    expect(await stored()).toEqual(before);
    const v3 = await h.call('GET', `/api/drops/${slug}/v/3`, { token });
    const v1 = await h.call('GET', `/api/drops/${slug}/v/1`, { token });
    expect(v3.json.files).toEqual(v1.json.files);
    const refs = await raw.selectFrom('bodies').select('refs').where('hash', '=', sha(image)).executeTakeFirst();
    expect(Number(refs?.refs)).toBe(2);
    // The restored copy outlives the original.
    expect((await h.call('DELETE', `/api/drops/${slug}/v/1`, { token })).status).toBe(200);
    expect((await h.call('GET', `/api/drops/${slug}/diff?from=3&to=2`, { token })).json.files.removed).toEqual([
      'app.js',
      'img/a.png',
    ]);
  });
});

describe('what the database holds', () => {
  it('republishing a folder with one file changed adds only that file’s bytes', async () => {
    const files = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`asset${i}.bin`, randomBytes(100_000)]));
    const body = (changed?: Buffer) => ({
      html: page('folder'),
      files: Object.fromEntries(
        Object.entries(files).map(([path, bytes]) => [path, b64(path === 'asset2.bin' && changed ? changed : bytes)]),
      ),
    });
    const slug = await created(body());
    const before = await stored();
    const changed = randomBytes(100_000);
    const put = await h.call('PUT', `/api/drops/${slug}`, { token, body: body(changed) });
    expect(put.status, put.text).toBe(200);
    const after = await stored();
    expect(after.rows - before.rows).toBe(1);
    expect(after.bytes - before.bytes).toBe(changed.length);
  });

  it('deleting versions frees a shared file only when no version of any drop uses it', async () => {
    const image = randomBytes(200_000);
    const hash = sha(image);
    const refs = async () =>
      Number((await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst())?.refs ?? 0);
    const a = await created({ files: { 'x.png': b64(image) } });
    const b = await created({ files: { 'y/x.png': b64(image), 'z.png': b64(image) } });
    await h.call('PUT', `/api/drops/${a}`, { token, body: { html: page('2'), files: { 'x.png': b64(image) } } });
    expect(await refs()).toBe(4);
    expect((await h.call('DELETE', `/api/drops/${a}/v/1`, { token })).status).toBe(200);
    expect(await refs()).toBe(3);
    expect((await h.call('DELETE', `/api/drops/${a}`, { token })).status).toBe(204);
    expect(await refs()).toBe(2);
    expect((await h.call('DELETE', `/api/drops/${b}`, { token })).status).toBe(204);
    expect(await refs()).toBe(0);
  });
});
