/** Bad input: every documented 4xx code, the nested error shape, and nothing changed in storage. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let token: string;
let slug: string;
let snapshot: unknown;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  token = await h.token('errors');
  slug = (await h.call('POST', '/api/drops', { token, body: { title: 't', html: page(), metadata: { a: 'b' } } })).json
    .slug;
  snapshot = await state();
});
afterAll(() => h.close());

/** Everything the account can see, to prove a refused request changed nothing. */
async function state() {
  const list = await h.call('GET', '/api/drops', { token });
  const versions = await h.call('GET', `/api/drops/${slug}/versions`, { token });
  return { list: list.json, versions: versions.json };
}

const big = (bytes: number) => 'x'.repeat(bytes);

interface Case {
  name: string;
  method: string;
  url: () => string;
  body?: unknown;
  rawBody?: string;
  status: number;
  code: string;
  details?: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: 'malformed JSON',
    method: 'POST',
    url: () => '/api/drops',
    rawBody: '{"title": "t",',
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'a JSON array body',
    method: 'POST',
    url: () => '/api/drops',
    body: [1, 2],
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'a JSON string body',
    method: 'POST',
    url: () => '/api/drops',
    body: 'hello',
    status: 400,
    code: 'invalid_json',
  },
  { name: 'an empty body', method: 'POST', url: () => '/api/drops', rawBody: '', status: 400, code: 'invalid_json' },
  {
    name: 'missing title',
    method: 'POST',
    url: () => '/api/drops',
    body: { html: page() },
    status: 400,
    code: 'title_required',
  },
  {
    name: 'empty title',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: '', html: page() },
    status: 400,
    code: 'title_required',
  },
  {
    name: 'missing html',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't' },
    status: 400,
    code: 'html_required',
  },
  {
    name: 'html missing on PUT',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { title: 't' },
    status: 400,
    code: 'html_required',
  },
  {
    name: 'a title of 201 characters',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 'é'.repeat(201), html: page() },
    status: 400,
    code: 'title_too_long',
  },
  {
    name: 'a description of 501 characters',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', description: big(501), html: page() },
    status: 400,
    code: 'description_too_long',
  },
  {
    name: 'a long description on PATCH',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { description: big(501) },
    status: 400,
    code: 'description_too_long',
  },
  {
    name: 'html of 2097153 bytes',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: big(2_097_153) },
    status: 400,
    code: 'html_too_large',
    details: { max_bytes: 2_097_152 },
  },
  {
    name: 'html of 2097153 bytes on PUT',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: big(2_097_153) },
    status: 400,
    code: 'html_too_large',
    details: { max_bytes: 2_097_152 },
  },
  {
    name: 'context of 65537 bytes',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), context: big(65_537) },
    status: 400,
    code: 'context_too_large',
  },
  {
    name: 'a 3-character passcode on create',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), passcode: 'abc' },
    status: 400,
    code: 'passcode_too_short',
  },
  {
    name: 'a missing passcode',
    method: 'POST',
    url: () => `/api/drops/${slug}/passcode`,
    body: {},
    status: 400,
    code: 'passcode_required',
  },
  {
    name: 'a 3-character passcode',
    method: 'POST',
    url: () => `/api/drops/${slug}/passcode`,
    body: { passcode: 'abc' },
    status: 400,
    code: 'passcode_too_short',
  },
  {
    name: 'a number passcode',
    method: 'POST',
    url: () => `/api/drops/${slug}/passcode`,
    body: { passcode: 1234 },
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'html on PATCH',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { html: page() },
    status: 400,
    code: 'metadata_only_on_patch',
  },
  {
    name: 'a number title (no coercion)',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 5, html: page() },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'title' },
  },
  {
    name: 'an object html',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: { a: 1 } },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'html' },
  },
  {
    name: 'metadata with 11 keys',
    method: 'POST',
    url: () => '/api/drops',
    body: {
      title: 't',
      html: page(),
      metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])),
    },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'metadata' },
  },
  {
    name: 'a metadata key with a space',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), metadata: { 'bad key': 'v' } },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'metadata', key: 'bad key' },
  },
  {
    name: 'a metadata key with a leading dot',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { metadata: { '.x': 'v' } },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'metadata', key: '.x' },
  },
  {
    name: 'a metadata key with a trailing hyphen',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: page(), metadata: { 'x-': 'v' } },
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'a metadata key of 65 characters',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { metadata: { [big(65)]: 'v' } },
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'a metadata value of 257 characters',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { metadata: { k: big(257) } },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'metadata', key: 'k' },
  },
  {
    name: 'a number metadata value',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { metadata: { k: 1 } },
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'a metadata array',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { metadata: ['a'] },
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'page=0',
    method: 'GET',
    url: () => '/api/drops?page=0',
    status: 400,
    code: 'invalid_arg',
    details: { field: 'page' },
  },
  { name: 'page=-1', method: 'GET', url: () => '/api/drops?page=-1', status: 400, code: 'invalid_arg' },
  {
    name: 'a huge page',
    method: 'GET',
    url: () => '/api/drops?page=99999999999999999999',
    status: 400,
    code: 'invalid_arg',
  },
  { name: 'page=abc', method: 'GET', url: () => '/api/drops?page=abc', status: 400, code: 'invalid_arg' },
  {
    name: 'pageSize=201',
    method: 'GET',
    url: () => '/api/drops?pageSize=201',
    status: 400,
    code: 'invalid_arg',
    details: { field: 'pageSize' },
  },
  { name: 'pageSize=0', method: 'GET', url: () => '/api/drops?pageSize=0', status: 400, code: 'invalid_arg' },
  {
    name: 'an unknown sortBy',
    method: 'GET',
    url: () => '/api/drops?sortBy=title',
    status: 400,
    code: 'invalid_arg',
    details: { field: 'sortBy' },
  },
  {
    name: 'an unknown sortOrder',
    method: 'GET',
    url: () => '/api/drops?sortOrder=up',
    status: 400,
    code: 'invalid_arg',
    details: { field: 'sortOrder' },
  },
  {
    name: 'a bad metadata filter key',
    method: 'GET',
    url: () => '/api/drops?metadata.b%20d=x',
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'a repeated metadata filter',
    method: 'GET',
    url: () => '/api/drops?metadata.a=x&metadata.a=y',
    status: 400,
    code: 'invalid_arg',
  },
  { name: 'a slug with ..%2f', method: 'GET', url: () => '/api/drops/..%2fetc', status: 400, code: 'invalid_slug' },
  {
    name: 'a unicode slug',
    method: 'GET',
    url: () => `/api/drops/${encodeURIComponent('ünï')}`,
    status: 400,
    code: 'invalid_slug',
  },
  {
    name: 'a 65-character slug',
    method: 'PUT',
    url: () => `/api/drops/${big(65)}`,
    body: { html: page() },
    status: 400,
    code: 'invalid_slug',
  },
  { name: 'a slug with a dot', method: 'DELETE', url: () => '/api/drops/a.b', status: 400, code: 'invalid_slug' },
  { name: 'an unknown slug', method: 'GET', url: () => '/api/drops/NoSuchDrop', status: 404, code: 'not_found' },
  {
    name: 'an unknown slug on PUT',
    method: 'PUT',
    url: () => '/api/drops/NoSuchDrop',
    body: { html: page() },
    status: 404,
    code: 'not_found',
  },
  {
    name: 'versions of an unknown slug',
    method: 'GET',
    url: () => '/api/drops/NoSuchDrop/versions',
    status: 404,
    code: 'not_found',
  },
  {
    name: 'a version of an unknown slug',
    method: 'GET',
    url: () => '/api/drops/NoSuchDrop/v/1',
    status: 404,
    code: 'not_found',
  },
  {
    name: 'a bad version under an unknown slug',
    method: 'GET',
    url: () => '/api/drops/NoSuchDrop/v/abc',
    status: 404,
    code: 'not_found',
  },
  {
    name: 'a huge version',
    method: 'DELETE',
    url: () => `/api/drops/${slug}/v/99999999999`,
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'a deeply nested body',
    method: 'POST',
    url: () => '/api/drops',
    rawBody: `{"title":"t","html":"x","metadata":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    status: 400,
    code: 'invalid_arg',
  },
  {
    name: 'password instead of passcode',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), password: 'abcd' },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'password' },
  },
  {
    name: 'a passcode on PUT',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: page(), passcode: 'abcd' },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'passcode' },
  },
  {
    name: 'a passcode on PATCH',
    method: 'PATCH',
    url: () => `/api/drops/${slug}`,
    body: { passcode: 'abcd' },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'passcode' },
  },
  {
    name: 'passcode on the legacy create',
    method: 'POST',
    url: () => '/api/prototypes',
    body: { title: 't', html: page(), passcode: 'abcd' },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'passcode' },
  },
  // The legacy shapes validate metadata and context as /api/drops does: invalid keys, nesting, too many keys, deep
  // nesting (a 500 from JSON.stringify's stack before) and a non-string context are refused, and nothing is stored.
  ...(['POST', 'PUT'] as const).flatMap((method): Case[] => {
    const url = method === 'POST' ? () => '/api/prototypes' : () => `/api/prototypes/${slug}`;
    const base = method === 'POST' ? { title: 't', html: page() } : { html: page() };
    // Built as text: JSON.stringify itself overflows the stack at this depth.
    const deep = `${'{"n":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const invalid: Array<{ label: string; field?: string; metadata?: unknown; context?: unknown }> = [
      { label: 'an invalid metadata key', metadata: { 'bad key!': 'v' }, field: 'metadata' },
      { label: 'a nested metadata value', metadata: { k: { n: [1] } }, field: 'metadata' },
      {
        label: 'eleven metadata keys',
        metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])),
      },
      { label: 'a metadata value of 257 characters', metadata: { k: big(257) } },
      { label: 'metadata as a string', metadata: 'nope' },
      { label: 'a non-string context', context: { a: 1 } },
    ];
    return [
      ...invalid.map(
        ({ label, field, ...extra }): Case => ({
          name: `${label} on the legacy ${method === 'POST' ? 'create' : 'update'}`,
          method,
          url,
          body: { ...base, ...extra },
          status: 400,
          code: 'invalid_arg',
          ...(field === undefined ? {} : { details: { field } }),
        }),
      ),
      {
        name: `metadata 5000 levels deep on the legacy ${method === 'POST' ? 'create' : 'update'}`,
        method,
        url,
        rawBody: `${JSON.stringify(base).slice(0, -1)},"metadata":${deep}}`,
        status: 400,
        code: 'invalid_arg',
        details: { field: 'metadata' },
      },
    ];
  }),
  // A `__proto__` key is valid JSON and passes the metadata key rules; it is refused by name, not as bad JSON.
  {
    name: 'a metadata key __proto__',
    method: 'POST',
    url: () => '/api/drops',
    rawBody: `{"title":"t","html":"<p>x</p>","metadata":{"__proto__":"v"}}`,
    status: 400,
    code: 'invalid_arg',
    details: { field: 'metadata', key: '__proto__' },
  },
  {
    name: 'a top-level __proto__ key',
    method: 'POST',
    url: () => '/api/drops',
    rawBody: `{"title":"t","html":"<p>x</p>","__proto__":{"isAdmin":true}}`,
    status: 400,
    code: 'invalid_arg',
    details: { field: '__proto__' },
  },
  // docs/api.md, "A look before publishing": block refuses a write that carries a secret, and stores nothing.
  {
    name: 'scan block and an AWS access key id in the html',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: `<p>${['AKIA', 'Z3MSJV4WWNKWW5FG'].join('')}</p>`, scan: 'block' },
    status: 422,
    code: 'sensitive_content',
    details: { findings: [{ kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'html', line: 1 }] },
  },
  {
    name: 'scan block and a secret in the context of a new version',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: '<p>x</p>', context: `\n${['AKIA', 'Z3MSJV4WWNKWW5FG'].join('')}`, scan: 'block' },
    status: 422,
    code: 'sensitive_content',
    details: { findings: [{ kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'context', line: 2 }] },
  },
  {
    name: 'an unknown scan mode',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: '<p>x</p>', scan: 'loud' },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'scan' },
  },
  // docs/api.md, "Many files in one drop".
  {
    name: 'a file path with a .. segment',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), files: { '../x.png': { content: 'x' } } },
    status: 400,
    code: 'invalid_file_path',
    details: { path: '../x.png' },
  },
  {
    name: 'a file named index.html at the top',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: page(), files: { 'index.html': { content: 'x' } } },
    status: 400,
    code: 'invalid_file_path',
    details: { path: 'index.html' },
  },
  {
    name: 'more files than a version takes',
    method: 'POST',
    url: () => '/api/drops',
    body: {
      title: 't',
      html: page(),
      files: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`f${i}`, { content: '' }])),
    },
    status: 400,
    code: 'too_many_files',
    details: { max_files: 500 },
  },
  {
    name: 'files beyond the version limit',
    method: 'PUT',
    url: () => `/api/drops/${slug}`,
    body: { html: page(), files: { 'a.bin': { content: big(20 * 1_048_576) } } },
    status: 400,
    code: 'version_too_large',
    details: { max_bytes: 20 * 1_048_576 },
  },
  {
    name: 'bad base64 in a file',
    method: 'POST',
    url: () => '/api/drops',
    body: { title: 't', html: page(), files: { 'a.png': { content: '***', encoding: 'base64' } } },
    status: 400,
    code: 'invalid_arg',
    details: { field: 'files', path: 'a.png' },
  },
  { name: 'version 0', method: 'GET', url: () => `/api/drops/${slug}/v/0`, status: 400, code: 'invalid_arg' },
  { name: 'version abc', method: 'GET', url: () => `/api/drops/${slug}/v/abc`, status: 400, code: 'invalid_arg' },
  {
    name: 'an unknown version',
    method: 'GET',
    url: () => `/api/drops/${slug}/v/42`,
    status: 404,
    code: 'version_not_found',
  },
  { name: 'an unknown route', method: 'GET', url: () => '/api/nothing', status: 404, code: 'not_found' },
];

describe('bad input', () => {
  for (const c of CASES) {
    it(`${c.method} with ${c.name} answers ${c.status} ${c.code} and changes nothing`, async () => {
      const reply = await h.call(c.method, c.url(), {
        token,
        ...(c.body === undefined ? {} : { body: c.body }),
        ...(c.rawBody === undefined ? {} : { rawBody: c.rawBody, headers: { 'content-type': 'application/json' } }),
      });
      expect(reply.status, reply.text.slice(0, 300)).toBe(c.status);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(reply.json.error).toEqual({
        code: c.code,
        message: expect.any(String),
        ...(reply.json.error.details === undefined ? {} : { details: expect.any(Object) }),
      });
      if (c.details !== undefined) expect(reply.json.error.details).toMatchObject(c.details);
      expect(await state()).toEqual(snapshot);
    });
  }

  it('html_too_large states the limit in its message', async () => {
    const reply = await h.call('POST', '/api/drops', { token, body: { title: 't', html: big(2_097_153) } });
    expect(reply.json.error.message).toContain('2097152');
  });
});

describe('transport limits', () => {
  it('refuses a 50 MB upload early with 413 html_too_large, without buffering it', async () => {
    const reply = await h.app.inject({
      method: 'POST',
      url: '/api/drops',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(50 * 1_048_576),
      },
      payload: '{"title":"t","html":"',
    });
    expect(reply.statusCode).toBe(413);
    expect(reply.json().error).toMatchObject({ code: 'html_too_large', details: { max_bytes: 2_097_152 } });
    expect(await state()).toEqual(snapshot);
  });

  it('answers 500 internal without a stack trace or SQL', async () => {
    const broken = await createHarness();
    const t = await broken.token('x');
    await broken.store.close();
    const reply = await broken.call('GET', '/api/drops', { token: t });
    expect(reply.status).toBe(500);
    expect(reply.json.error.code).toBe('internal');
    expect(reply.text).not.toMatch(/at |SELECT|sqlite|\.ts/i);
    await broken.close();
  });
});

describe('text that cannot be stored exactly is refused, not altered', () => {
  const json = (bytes: Buffer | string) => ({
    method: 'POST' as const,
    url: '/api/drops',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: bytes,
  });

  it('a lone surrogate escape in the HTML: 400 invalid_arg naming the field', async () => {
    const reply = await h.app.inject(json('{"title":"t","html":"<p>\\ud800</p>"}'));
    expect(reply.statusCode).toBe(400);
    expect(reply.json().error).toMatchObject({ code: 'invalid_arg', details: { field: 'html' } });
    const inTitle = await h.app.inject(json('{"title":"a\\udc00","html":"<p>x</p>"}'));
    expect(inTitle.json().error).toMatchObject({ code: 'invalid_arg', details: { field: 'title' } });
    expect(await state()).toEqual(snapshot);
  });

  it('invalid UTF-8 bytes in a body: 400 invalid_json', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"title":"t","html":"<p>'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('</p>"}'),
    ]);
    const reply = await h.app.inject(json(bytes));
    expect(reply.statusCode).toBe(400);
    expect(reply.json().error.code).toBe('invalid_json');
    expect(reply.json().error.message).toContain('UTF-8');
    expect(await state()).toEqual(snapshot);
  });

  it('a passcode sent with a raw 0xFF byte is refused, so U+FFFD can never open it', async () => {
    const bytes = Buffer.concat([Buffer.from('{"passcode":"ab'), Buffer.from([0xff]), Buffer.from('cd"}')]);
    const reply = await h.app.inject({ ...json(bytes), url: `/api/drops/${slug}/passcode` });
    expect(reply.statusCode).toBe(400);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.locked).toBe(false);
  });

  it('a form with bytes that are not UTF-8 (raw or %FF) is refused', async () => {
    for (const payload of [
      Buffer.from([0x70, 0x61, 0x73, 0x73, 0x63, 0x6f, 0x64, 0x65, 0x3d, 0xff]),
      'passcode=%FF%FE',
    ]) {
      const reply = await h.app.inject({
        method: 'POST',
        url: `/p/${slug}/unlock`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload,
      });
      expect(reply.statusCode).toBe(400);
      expect(reply.headers['set-cookie']).toBeUndefined();
    }
  });

  it('well-formed text outside the BMP is stored and served byte for byte', async () => {
    const html = '<!doctype html><title>😀</title><p>𝄞 ünï</p>';
    const created = await h.app.inject(json(JSON.stringify({ title: '😀', html })));
    expect(created.statusCode).toBe(201);
    const drop = created.json();
    const version = await h.call('GET', `/api/drops/${drop.slug}/versions`, { token });
    expect(version.json[0].size_bytes).toBe(Buffer.byteLength(html));
    const raw = await h.app.inject({ method: 'GET', url: `/p/${drop.slug}/raw` });
    expect(raw.body).toContain('<p>𝄞 ünï</p>');
    await h.call('DELETE', `/api/drops/${drop.slug}`, { token });
  });
});

describe('length errors name the right limit', () => {
  it('an empty title is title_required with no limit; a long one names its maximum', async () => {
    const empty = await h.call('POST', '/api/drops', { token, body: { title: '', html: page() } });
    expect(empty.json.error).toMatchObject({ code: 'title_required', details: { field: 'title' } });
    expect(empty.json.error.details.max_chars).toBeUndefined();
    const long = await h.call('POST', '/api/drops', { token, body: { title: 'x'.repeat(201), html: page() } });
    expect(long.json.error).toMatchObject({ code: 'title_too_long', details: { field: 'title', max_chars: 200 } });
    expect(long.json.error.message).toContain('200');
  });
});

describe('an unknown path answers 404 whatever its body', () => {
  const bodies: Array<[string, string, string]> = [
    ['a form', 'application/x-www-form-urlencoded', 'a=1&b=%FF'],
    ['plain text', 'text/plain', 'hello'],
    ['malformed JSON', 'application/json', '{"a":'],
    ['a body over the 64 KiB cap', 'application/x-www-form-urlencoded', `a=${big(70_000)}`],
  ];
  for (const [what, type, payload] of bodies) {
    it(`POST /api/nothing and /nothing with ${what}: 404 not_found, not a body error`, async () => {
      for (const url of ['/api/nothing', '/nothing', '/console/nothing/at/all']) {
        const reply = await h.app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
        expect(reply.statusCode, `${url}: ${reply.body.slice(0, 200)}`).toBe(404);
        expect(reply.json().error.code).toBe('not_found');
      }
    });
  }

  it('a browser posting a form to an unknown page gets the HTML 404 page; /api/ stays JSON', async () => {
    const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,*/*;q=0.8' };
    const page404 = await h.app.inject({ method: 'POST', url: '/console/nothing', headers, payload: 'x=%FF' });
    expect(page404.statusCode).toBe(404);
    expect(page404.headers['content-type']).toMatch(/^text\/html/);
    expect(page404.body).toContain('Page not found');
    const api = await h.app.inject({ method: 'POST', url: '/api/nothing', headers, payload: 'x=%FF' });
    expect(api.statusCode).toBe(404);
    expect(api.json().error.code).toBe('not_found');
  });
});
