/**
 * Export and import (docs/api.md, "Export and import"): the streamed zip and its documents against the published
 * schemas, a round trip from an instance on SQLite to one on PostgreSQL (every version's bytes, files, contexts,
 * metadata, settings and comments equal), importing twice, quotas and the write budget, hostile archives refused
 * with nothing stored, and the owner-only refusals.
 */
import fs from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { ARCHIVE_SCHEMAS } from '../src/portability/schemas.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';

const DOCS = path.resolve(import.meta.dirname, '../../../docs/schemas');
const LIMITS = { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 };

/** Every entry of a zip, in order, with its bytes. */
function unzip(zip: Buffer): Promise<Array<[string, Buffer]>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (error, file) => {
      if (error) return reject(error);
      const entries: Array<[string, Buffer]> = [];
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            entries.push([entry.fileName, Buffer.concat(chunks)]);
            file.readEntry();
          });
        });
      });
      file.on('end', () => resolve(entries));
      file.on('error', reject);
      file.readEntry();
    });
  });
}

/** A zip of these entries, made with yazl (which refuses unsafe names). */
function zipOf(entries: Array<[string, Buffer | string]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of entries) zip.addBuffer(Buffer.from(content), name, { mtime: new Date(0) });
  zip.end();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

interface RawEntry {
  readonly name: string;
  /** The entry's data as stored (deflated when `method` is 8). */
  readonly data: Buffer;
  readonly method: 0 | 8;
  /** What the headers declare. */
  readonly size: number;
}

/** A zip written byte by byte, to say what a hostile archive says (names, declared sizes) that yazl would not. */
function craftZip(entries: readonly RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt32LE(0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const stored = (name: string, content: string | Buffer): RawEntry => {
  const data = Buffer.from(content);
  return { name, data, method: 0, size: data.length };
};

/** Raw deflate of `megabytes` MiB of zeros, built from one flushed block repeated (small to hold, huge inflated). */
function zerosDeflated(megabytes: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(1_048_576), { finishFlush: 2 /* Z_SYNC_FLUSH */ });
  return Buffer.concat([...Array.from({ length: megabytes }, () => block), Buffer.from([0x03, 0x00])]);
}

const manifestOf = (drops: Array<{ slug: string }>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: 'htmldrop-export',
    format_version: 1,
    exported_at: 1,
    user_id: 'u_hostile',
    drops: drops.map((drop) => ({ slug: drop.slug, title: 't', latest_version: 1 })),
    ...extra,
  });

const dropJsonOf = (slug: string) =>
  JSON.stringify({
    slug,
    title: 't',
    description: null,
    metadata: {},
    created_at: 1,
    updated_at: 1,
    latest_version: 1,
    settings: {
      comments: 'signed_in',
      network: 'open',
      visibility: 'public',
      allow: [],
      expires_at: null,
      passcode_hash: null,
    },
  });

const versionsJsonOf = (size: number) =>
  JSON.stringify([{ version: 1, created_at: 1, size_bytes: size, context: null, files: [] }]);

let source: Harness;
let target: Harness;
let owner: string;
let mover: string;
let archive: Buffer;
const slugs: string[] = [];

async function importZip(h: Harness, token: string, zip: Buffer, headers: Record<string, string> = {}) {
  const reply = await h.app.inject({
    method: 'POST',
    url: '/api/import',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip', ...headers },
    payload: zip,
  });
  return { status: reply.statusCode, json: reply.json() };
}

async function exportZip(h: Harness, token: string, query = '') {
  const reply = await h.app.inject({
    method: 'GET',
    url: `/api/export${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: reply.statusCode, headers: reply.headers, body: reply.rawPayload };
}

beforeAll(async () => {
  const clock = createTestClock();
  [source, target] = await Promise.all([
    createHarness({ dialect: 'sqlite', clock, limits: LIMITS }),
    createHarness({ dialect: 'postgres', clock, limits: { ...LIMITS, maxWritesPerMinute: 2 } }),
  ]);
  owner = await source.token('ann');
  mover = await target.token('ann');
  const call = async (method: string, url: string, body?: unknown) => {
    const reply = await source.call(method, url, { token: owner, body });
    expect(reply.status, `${method} ${url}: ${reply.text}`).toBeLessThan(300);
    clock.advance(1000);
    return reply.json;
  };
  // A drop of three versions: a context on 1; files on 2 (one named context.md, beside a context; one binary);
  // version 3 plain; comments by the owner, one resolved.
  const first = await call('POST', '/api/drops', {
    title: 'Report',
    description: 'Quarterly',
    html: page('one'),
    context: '# first context',
    metadata: { team: 'ops', 'k.v': 'x' },
  });
  await call('PUT', `/api/drops/${first.slug}`, {
    html: '<!doctype html><html><head><title>t</title></head><body><img src="a/pic.png">é</body></html>',
    context: 'second context',
    files: {
      'context.md': { content: 'a file that is not the context' },
      'a/pic.png': { content: Buffer.from([137, 80, 78, 71, 0, 1, 2, 255]).toString('base64'), encoding: 'base64' },
      'app.js': { content: 'console.log(1)' },
    },
  });
  await call('PUT', `/api/drops/${first.slug}`, { html: page('three') });
  const comment = await call('POST', `/api/drops/${first.slug}/comments`, { body: 'Looks good', version: 1 });
  await call('POST', `/api/drops/${first.slug}/comments`, { body: 'Second thought', quote: 'one' });
  await call('POST', `/api/drops/${first.slug}/comments/${comment.id}/resolve`, {});
  // A locked drop with settings, and a version deleted (numbers keep their gap).
  const second = await call('POST', '/api/drops', {
    title: 'Locked',
    html: page('secret'),
    passcode: 'open sesame',
    comments: 'open',
    network: ['https://cdn.example.com'],
    expires_at: clock.now() + 30 * 86_400_000,
  });
  await call('PUT', `/api/drops/${second.slug}`, { html: page('secret 2') });
  await call('PUT', `/api/drops/${second.slug}`, { html: page('secret 3') });
  await call('DELETE', `/api/drops/${second.slug}/v/2`);
  const third = await call('POST', '/api/drops', { title: 'Plain', html: page('plain') });
  slugs.push(first.slug, second.slug, third.slug);
  const exported = await exportZip(source, owner);
  expect(exported.status).toBe(200);
  archive = exported.body;
}, 60_000);
afterAll(async () => {
  await Promise.all([source?.close(), target?.close()]);
});

describe('GET /api/export', () => {
  it('streams a zip whose entries come in a fixed order', async () => {
    const again = await exportZip(source, owner);
    expect(again.headers['content-type']).toBe('application/zip');
    expect(again.headers['content-disposition']).toMatch(
      /^attachment; filename="htmldrop-export-\d{4}-\d\d-\d\d\.zip"$/,
    );
    const names = (await unzip(archive)).map(([name]) => name);
    expect((await unzip(again.body)).map(([name]) => name)).toEqual(names);
    const [a, b] = slugs;
    expect(names.slice(0, 12)).toEqual([
      'manifest.json',
      `drops/${a}/drop.json`,
      `drops/${a}/versions.json`,
      `drops/${a}/v/1/index.html`,
      `drops/${a}/v/1/context.md`,
      `drops/${a}/v/2/index.html`,
      `drops/${a}/v/2/context-1.md`,
      `drops/${a}/v/2/a/pic.png`,
      `drops/${a}/v/2/app.js`,
      `drops/${a}/v/2/context.md`,
      `drops/${a}/v/3/index.html`,
      `drops/${a}/comments.json`,
    ]);
    expect(names).toContain(`drops/${b}/v/3/index.html`);
    expect(names).not.toContain(`drops/${b}/v/2/index.html`);
  });

  it('writes documents valid against the published JSON Schemas, which are the ones the import uses', async () => {
    const ajv = new Ajv({ strict: false });
    const schema = (name: string) => JSON.parse(fs.readFileSync(path.join(DOCS, name), 'utf8'));
    for (const [name, inCode] of Object.entries(ARCHIVE_SCHEMAS)) {
      expect(schema(name), name).toEqual(JSON.parse(JSON.stringify(inCode)));
    }
    const entries = new Map(await unzip(archive));
    const validators = new Map(Object.keys(ARCHIVE_SCHEMAS).map((name) => [name, ajv.compile(schema(name))]));
    const check = (name: string, entry: string) => {
      const validate = validators.get(name) as ReturnType<typeof ajv.compile>;
      const value = JSON.parse((entries.get(entry) as Buffer).toString('utf8'));
      expect(validate(value), `${entry}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      return value;
    };
    const manifest = check('manifest.schema.json', 'manifest.json');
    expect(manifest.drops.map((drop: { slug: string }) => drop.slug)).toEqual(slugs);
    for (const slug of slugs) {
      check('drop.schema.json', `drops/${slug}/drop.json`);
      check('versions.schema.json', `drops/${slug}/versions.json`);
      check('comments.schema.json', `drops/${slug}/comments.json`);
    }
    const locked = check('drop.schema.json', `drops/${slugs[1]}/drop.json`);
    expect(locked.settings).toMatchObject({ comments: 'open', visibility: 'public', allow: [] });
    expect(locked.settings.passcode_hash).toMatch(/^scrypt\$/);
    const stats = JSON.parse((entries.get(`drops/${slugs[0]}/stats.json`) as Buffer).toString('utf8'));
    expect(stats).toMatchObject({ views: 0, versions: [{ version: 3 }, { version: 2 }, { version: 1 }] });
  });

  it('narrows to the drops named by ?slug=, and refuses a drop of another account', async () => {
    const one = await exportZip(source, owner, `?slug=${slugs[2]}`);
    expect(one.status).toBe(200);
    const names = (await unzip(one.body)).map(([name]) => name);
    expect(names).toEqual([
      'manifest.json',
      `drops/${slugs[2]}/drop.json`,
      `drops/${slugs[2]}/versions.json`,
      `drops/${slugs[2]}/v/1/index.html`,
      `drops/${slugs[2]}/comments.json`,
      `drops/${slugs[2]}/stats.json`,
    ]);
    const other = await source.token('bob');
    expect((await exportZip(source, other, `?slug=${slugs[2]}`)).status).toBe(403);
    expect((await exportZip(source, owner, '?slug=nosuchdrop')).status).toBe(404);
    expect((await exportZip(source, owner, '?slug=bad%20slug')).status).toBe(400);
  });
});

describe('POST /api/import', () => {
  it('recreates every drop on PostgreSQL: versions, bytes, files, contexts, metadata, settings and comments', async () => {
    const imported = await importZip(target, mover, archive);
    expect(imported.status, JSON.stringify(imported.json)).toBe(200);
    expect(imported.json.skipped).toEqual([]);
    expect(imported.json.imported.map((item: { from: string }) => item.from)).toEqual(slugs);
    expect(imported.json.imported.map((item: { versions: number }) => item.versions)).toEqual([3, 2, 1]);
    for (const { from, slug } of imported.json.imported as Array<{ from: string; slug: string }>) {
      expect(slug).not.toBe(from);
      const [before, after] = await Promise.all([source.store.findDrop(from), target.store.findDrop(slug)]);
      const settled = (drop: typeof before) => ({
        title: drop?.title,
        description: drop?.description,
        metadata: drop?.metadata,
        comments: drop?.comments,
        network: drop?.network,
        expiresAt: drop?.expiresAt,
        locked: drop?.locked,
        latestVersion: drop?.latestVersion,
        versionCount: drop?.versionCount,
        createdAt: drop?.createdAt,
      });
      expect(settled(after)).toEqual(settled(before));
      expect((await target.store.findPasscode(slug))?.hash).toBe((await source.store.findPasscode(from))?.hash);
      const versions = await source.store.listVersions(from);
      expect((await target.store.listVersions(slug)).map(({ slug: _, ...rest }) => rest)).toEqual(
        versions.map(({ slug: _, ...rest }) => rest),
      );
      for (const { version } of versions) {
        expect((await target.store.getVersionContent(slug, version))?.html).toBe(
          (await source.store.getVersionContent(from, version))?.html,
        );
        expect((await target.store.getVersion(slug, version))?.context).toBe(
          (await source.store.getVersion(from, version))?.context,
        );
        const files = (await source.store.listVersionFiles(from, version)).get(version) ?? [];
        expect((await target.store.listVersionFiles(slug, version)).get(version) ?? []).toEqual(files);
        for (const file of files) {
          expect((await target.store.getVersionFile(slug, version, file.path))?.bytes).toEqual(
            (await source.store.getVersionFile(from, version, file.path))?.bytes,
          );
        }
      }
      const comments = (await source.store.listComments({ slug: from }, -1, 100)).map(
        ({ id: _, slug: __, ...rest }) => rest,
      );
      expect((await target.store.listComments({ slug }, -1, 100)).map(({ id: _, slug: __, ...rest }) => rest)).toEqual(
        comments,
      );
    }
    // The locked drop stays locked with the same passcode: the viewer's gate opens with it.
    const locked = imported.json.imported[1].slug;
    const gate = await target.app.inject({ method: 'GET', url: `/p/${locked}/raw` });
    expect(gate.statusCode).toBe(401);
  });

  it('creates nothing when the same archive is imported again, and names each drop it skipped', async () => {
    const before = (await target.call('GET', '/api/drops', { token: mover })).json.pagination.total_items;
    const again = await importZip(target, mover, archive);
    expect(again.status).toBe(200);
    expect(again.json.imported).toEqual([]);
    expect(again.json.skipped.map((item: { from: string; reason: string }) => [item.from, item.reason])).toEqual(
      slugs.map((slug) => [slug, 'already_imported']),
    );
    expect((await target.call('GET', '/api/drops', { token: mover })).json.pagination.total_items).toBe(before);
  });

  it('counts one write for a whole import (the target allows 2 a minute, and took 2 imports of 3 drops)', async () => {
    const third = await importZip(target, mover, archive);
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('rate_limited');
  });

  it('creates each drop once when the same archive is imported twice at the same time', async () => {
    const token = await target.token('twice');
    const both = await Promise.all([importZip(target, token, archive), importZip(target, token, archive)]);
    expect(both.map((result) => result.status)).toEqual([200, 200]);
    const made = both.flatMap((result) => result.json.imported.map((item: { from: string }) => item.from));
    expect(made.sort()).toEqual([...slugs].sort());
    const skipped = both.flatMap((result) => result.json.skipped.map((item: { reason: string }) => item.reason));
    expect(skipped).toEqual(slugs.map(() => 'already_imported'));
    expect((await target.call('GET', '/api/drops', { token })).json.pagination.total_items).toBe(3);
  });

  it('looks at each version before publishing: with HTMLDROP_SCAN=block a drop with a secret is skipped', async () => {
    const blocking = await createHarness({ limits: LIMITS, env: { HTMLDROP_SCAN: 'block' } });
    try {
      const secret = page(`key ${['AKIA', 'Z3MSJV4WWNKWW5FG'].join('')}`);
      const clean = page('clean');
      const zip = craftZip([
        stored('manifest.json', manifestOf([{ slug: 'leaky' }, { slug: 'clean' }])),
        stored('drops/leaky/drop.json', dropJsonOf('leaky')),
        stored('drops/leaky/versions.json', versionsJsonOf(Buffer.byteLength(secret))),
        stored('drops/leaky/v/1/index.html', secret),
        stored('drops/clean/drop.json', dropJsonOf('clean')),
        stored('drops/clean/versions.json', versionsJsonOf(Buffer.byteLength(clean))),
        stored('drops/clean/v/1/index.html', clean),
      ]);
      const token = await blocking.token('scanned');
      const result = await importZip(blocking, token, zip);
      expect(result.status).toBe(200);
      expect(result.json.skipped).toEqual([{ from: 'leaky', reason: 'sensitive_content' }]);
      expect(result.json.imported.map((item: { from: string }) => item.from)).toEqual(['clean']);
    } finally {
      await blocking.close();
    }
  });

  it("skips, by name, the drops over this service's limits or with settings it cannot take", async () => {
    const strict = await createHarness({ limits: { ...LIMITS, maxVersionsPerDrop: 2 } });
    try {
      const token = await strict.token('strict');
      const result = await importZip(strict, token, archive);
      expect(result.json.skipped).toEqual([{ from: slugs[0], reason: 'version_limit_reached' }]);
      const html = page('private');
      const hidden = JSON.parse(dropJsonOf('hidden'));
      hidden.settings.visibility = 'private';
      const zip = craftZip([
        stored('manifest.json', manifestOf([{ slug: 'hidden' }])),
        stored('drops/hidden/drop.json', JSON.stringify(hidden)),
        stored('drops/hidden/versions.json', versionsJsonOf(Buffer.byteLength(html))),
        stored('drops/hidden/v/1/index.html', html),
      ]);
      const other = await importZip(strict, token, zip);
      expect(other.json).toEqual({ imported: [], skipped: [{ from: 'hidden', reason: 'invalid_arg' }] });
      // Who may see a drop comes along, checked as a write's: never more open than it was.
      const circle = JSON.parse(dropJsonOf('circle'));
      circle.settings.visibility = 'people';
      circle.settings.allow = ['Dana@Client.example', '@corp.example'];
      const kept = await importZip(
        strict,
        token,
        craftZip([
          stored('manifest.json', manifestOf([{ slug: 'circle' }])),
          stored('drops/circle/drop.json', JSON.stringify(circle)),
          stored('drops/circle/versions.json', versionsJsonOf(Buffer.byteLength(html))),
          stored('drops/circle/v/1/index.html', html),
        ]),
      );
      expect(kept.json.skipped).toEqual([]);
      const made = await strict.call('GET', `/api/drops/${kept.json.imported[0].slug}`, { token });
      expect([made.json.visibility, made.json.allow]).toEqual(['people', ['dana@client.example', '@corp.example']]);
      const anonymous = await strict.call('GET', `/p/${kept.json.imported[0].slug}/raw`);
      expect(anonymous.status).toBe(401);
      // Searchable at once, as a created drop is: the index is kept in the import's transaction.
      const found = await strict.call('GET', '/api/drops?q=private', { token });
      expect(found.json.data.map((drop: { slug: string }) => drop.slug)).toContain(kept.json.imported[0].slug);
    } finally {
      await strict.close();
    }
  });

  it('skips, by name, the drops over the account quota', async () => {
    const small = await createHarness({ limits: { ...LIMITS, maxDropsPerAccount: 2 } });
    try {
      const token = await small.token('cy');
      const result = await importZip(small, token, archive);
      expect(result.status).toBe(200);
      expect(result.json.imported).toHaveLength(2);
      expect(result.json.skipped).toEqual([{ from: slugs[2], reason: 'quota_exceeded' }]);
    } finally {
      await small.close();
    }
  });
});

describe('hostile archives are refused with 400 invalid_archive and nothing stored', () => {
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    h = await createHarness({ limits: { ...LIMITS, maxImportInflatedBytes: 512 * 1_048_576 } });
    token = await h.token('eve');
  });
  afterAll(() => h?.close());

  const html = page('x');
  const valid = (
    slug: string,
    indexName = `drops/${slug}/v/1/index.html`,
    index: RawEntry = stored(indexName, html),
  ) => [
    stored('manifest.json', manifestOf([{ slug }])),
    stored(`drops/${slug}/drop.json`, dropJsonOf(slug)),
    stored(`drops/${slug}/versions.json`, versionsJsonOf(Buffer.byteLength(html))),
    index,
  ];

  const cases: Array<[string, () => Buffer | Promise<Buffer>, RegExp]> = [
    [
      'a ../ path',
      () => craftZip([...valid('aaa'), stored('drops/aaa/v/1/../../../evil.html', 'x')]),
      /relative path|\.\./,
    ],
    ['an absolute path', () => craftZip([...valid('bbb'), stored('/etc/evil', 'x')]), /absolute path/],
    ['a backslash', () => craftZip([...valid('ccc'), stored('drops\\ccc\\evil', 'x')]), /invalid characters/],
    ['a NUL in a name', () => craftZip([...valid('ddd'), stored('drops/ddd/v/1/a\u0000b', 'x')]), /NUL/],
    [
      'an entry inflating to 1 GB (declared)',
      () => {
        const data = zerosDeflated(1024);
        return craftZip([
          ...valid('eee').slice(0, 3),
          { name: 'drops/eee/v/1/index.html', data, method: 8, size: 1024 * 1_048_576 },
        ]);
      },
      /more than|200 times/,
    ],
    [
      'an entry inflating to 1 GB while declaring a few bytes',
      () => {
        const data = zerosDeflated(1024);
        return craftZip([
          ...valid('fff').slice(0, 3),
          { name: 'drops/fff/v/1/index.html', data, method: 8, size: Buffer.byteLength(html) },
        ]);
      },
      /cannot be read/,
    ],
    ['no manifest', () => craftZip(valid('ggg').slice(1)), /no manifest\.json/],
    [
      'an unknown format_version',
      () =>
        craftZip([
          stored('manifest.json', manifestOf([{ slug: 'hhh' }], { format_version: 2 })),
          ...valid('hhh').slice(1),
        ]),
      /format_version 2/,
    ],
    ['not a zip', () => Buffer.from('this is not a zip archive at all'), /not a zip|zip archive/i],
    [
      'a file that is not what versions.json says',
      () => craftZip(valid('iii', 'drops/iii/v/1/index.html', stored('drops/iii/v/1/index.html', `${html}!`))),
      /declares|bytes/,
    ],
    [
      'a context and a file under one name',
      () => {
        const versions = JSON.stringify([
          {
            version: 1,
            created_at: 1,
            size_bytes: Buffer.byteLength(html),
            context: 'context.md',
            files: [{ path: 'context.md', size_bytes: 1, content_type: 'text/markdown', sha256: '0'.repeat(64) }],
          },
        ]);
        return craftZip([
          stored('manifest.json', manifestOf([{ slug: 'lll' }])),
          stored('drops/lll/drop.json', dropJsonOf('lll')),
          stored('drops/lll/versions.json', versions),
          stored('drops/lll/v/1/index.html', html),
          stored('drops/lll/v/1/context.md', 'x'),
        ]);
      },
      /names one entry of version 1 twice/,
    ],
    [
      'an entry outside the layout',
      () =>
        zipOf([
          ['manifest.json', manifestOf([])],
          ['notes.txt', 'x'],
        ]),
      /not part of an export/,
    ],
  ];

  for (const [name, make, message] of cases) {
    it(`refuses ${name}`, async () => {
      const result = await importZip(h, token, await make());
      expect(result.status, JSON.stringify(result.json)).toBe(400);
      expect(result.json.error.code).toBe('invalid_archive');
      expect(result.json.error.message).toMatch(message);
      expect((await h.call('GET', '/api/drops', { token })).json.pagination.total_items).toBe(0);
    });
  }

  it('imports nothing of a valid drop when a later drop of the same archive is broken', async () => {
    const good = valid('jjj');
    const broken = valid('kkk', 'drops/kkk/v/1/index.html', stored('drops/kkk/v/1/index.html', 'short'));
    const zip = craftZip([
      stored('manifest.json', manifestOf([{ slug: 'jjj' }, { slug: 'kkk' }])),
      ...good.slice(1),
      ...broken.slice(1),
    ]);
    const result = await importZip(h, token, zip);
    expect(result.status).toBe(400);
    expect((await h.call('GET', '/api/drops', { token })).json.pagination.total_items).toBe(0);
    // The good one alone goes in.
    const alone = await importZip(h, token, craftZip(good));
    expect(alone.json.imported).toHaveLength(1);
  });

  it('refuses a body over HTMLDROP_MAX_IMPORT_BYTES from its Content-Length, unread (413 body_too_large)', async () => {
    const capped = await createHarness({ limits: { ...LIMITS, maxImportBytes: 1000 } });
    try {
      const t = await capped.token('zed');
      const result = await importZip(capped, t, Buffer.alloc(2000));
      expect(result.status).toBe(413);
      expect(result.json.error).toMatchObject({ code: 'body_too_large', details: { max_bytes: 1000 } });
    } finally {
      await capped.close();
    }
  });

  it('refuses a body that is not declared as a zip', async () => {
    const result = await importZip(h, token, Buffer.from('{}'), { 'content-type': 'application/json' });
    expect(result.status).toBe(400);
    expect(result.json.error.code).toBe('invalid_archive');
  });
});

describe('export and import are owner endpoints', () => {
  const requests = [
    ['GET', '/api/export'],
    ['POST', '/api/import'],
  ] as const;
  for (const [method, url] of requests) {
    it(`${method} ${url} refuses missing, malformed and revoked credentials`, async () => {
      const send = (authorization?: string) =>
        source.app.inject({
          method,
          url,
          headers: { 'content-type': 'application/zip', ...(authorization ? { authorization } : {}) },
          ...(method === 'POST' ? { payload: archive } : {}),
        });
      expect((await send()).statusCode).toBe(401);
      expect((await send('Bearer nope')).statusCode).toBe(401);
      const token = await source.token('revoked-user', 'to revoke');
      const me = await source.call('GET', '/api/tokens', { token });
      const id = me.json.tokens?.find((t: { current: boolean }) => t.current)?.id ?? me.json[0]?.id;
      expect((await source.call('DELETE', `/api/tokens/${id}`, { token })).status).toBe(204);
      const revoked = await send(`Bearer ${token}`);
      expect(revoked.statusCode).toBe(401);
      expect(revoked.json().error.code).toBe('invalid_token');
    });
  }
});

describe('the console: "Download everything"', () => {
  const ORIGIN = 'http://drops.test';
  const first = (header: string | string[] | undefined) => ([header ?? []].flat()[0] ?? '').split(';')[0] ?? '';

  /** Signs `login` in through the local provider, as a browser does (as in console.test.ts). */
  async function signIn(login: string): Promise<string> {
    const start = await source.app.inject({ method: 'GET', url: '/console/login?next=/console' });
    const state = new URL(String(start.headers.location), ORIGIN).searchParams.get('state') ?? '';
    const done = await source.app.inject({
      method: 'POST',
      url: '/verify/callback',
      headers: {
        cookie: first(start.headers['set-cookie']),
        origin: ORIGIN,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ state, username: login }).toString(),
    });
    const set = [done.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('hd_web=')) ?? '';
    return set.split(';')[0] ?? '';
  }

  it('links the export from the list, and /console/export downloads the same archive as the API', async () => {
    const cookie = await signIn('ann');
    const list = await source.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
    expect(list.body).toContain('<a class="button" href="/console/export" download id="download-everything-link">');
    const download = await source.app.inject({ method: 'GET', url: '/console/export', headers: { cookie } });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/zip');
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="htmldrop-export-/);
    const names = (await unzip(download.rawPayload)).map(([name]) => name);
    expect(names).toEqual((await unzip(archive)).map(([name]) => name));
  });

  it('shows the sign-in page, not an archive, without a session', async () => {
    const download = await source.app.inject({ method: 'GET', url: '/console/export' });
    expect(download.headers['content-type']).toMatch(/^text\/html/);
    expect(download.body).toContain('/console/login?next=%2Fconsole%2Fexport');
  });
});
