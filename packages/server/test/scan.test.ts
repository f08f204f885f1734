/**
 * The look before publishing over HTTP (docs/api.md, "A look before publishing"): warnings on POST, PUT and restore;
 * block per request and forced by the operator, storing nothing; the secret never in an answer, an error or the logs;
 * each version's findings kept and shown by the console.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/http/app.js';
import { createHarness, type Harness, page } from './helpers.js';

// Built at run time, so that no scanner of this repository finds them in its source.
const AWS_KEY = ['AKIA', 'Z3MSJV4WWNKWW5FG'].join('');
const DB_PASSWORD = ['Wq7', 'vLz2', 'Rt9pK'].join('');
const DB_URL = `postgres://report:${DB_PASSWORD}@db.internal.acme-corp.net:5432/sales`;
const STRIPE_KEY = ['sk_', 'live_', '4eC39HqLyjWDarjtT1zdp7dc', 'X2'].join('');
const SECRETS = [AWS_KEY, DB_PASSWORD, STRIPE_KEY];

const customers = Array.from({ length: 12 }, (_, i) => `<li>customer${i}.smith@mailbox.example.net</li>`).join('\n');
/** Line 3: the AWS key; line 4: the connection URL. */
const leaky = `<!doctype html>\n<h1>Costs</h1>\n<pre>AWS_ACCESS_KEY_ID=${AWS_KEY}</pre>\n<p>${DB_URL}</p>\n`;

let h: Harness;
let token: string;

const countDrops = async () => (await h.call('GET', '/api/drops', { token })).json.pagination.total_items as number;

describe('warn (the default)', () => {
  beforeEach(async () => {
    h = await createHarness();
    token = await h.token();
  });
  afterEach(async () => {
    await h.close();
  });

  it('POST answers warnings naming the rule, where and line, masked; a clean POST answers none', async () => {
    const created = await h.call('POST', '/api/drops', {
      token,
      body: { title: 'Costs', html: leaky, context: `Customers:\n${customers}` },
    });
    expect(created.status).toBe(201);
    expect(created.json.warnings).toEqual([
      { kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'html', line: 3, excerpt: 'AKIA************W5FG' },
      {
        kind: 'secret',
        rule: 'database-connection-string/PostgreSQLConnection',
        where: 'html',
        line: 4,
        excerpt: expect.stringMatching(/^post\*+ales$/),
      },
      {
        kind: 'personal_data',
        rule: 'personal/email-list',
        where: 'context',
        line: 2,
        excerpt: expect.stringMatching(/\(12 distinct\)$/),
      },
    ]);
    for (const secret of SECRETS) expect(created.text).not.toContain(secret);
    const clean = await h.call('POST', '/api/drops', { token, body: { title: 'Clean', html: page() } });
    expect(clean.status).toBe(201);
    expect(clean.json).not.toHaveProperty('warnings');
    // Reads carry no warnings: only the answer of the write that made the version.
    expect((await h.call('GET', `/api/drops/${created.json.slug}`, { token })).json).not.toHaveProperty('warnings');
  });

  it('PUT answers the new version’s warnings; the legacy write and a restore too; each version keeps its own', async () => {
    const { slug } = (await h.call('POST', '/api/drops', { token, body: { title: 'R', html: page() } })).json;
    const put = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: `<p>x</p>\n<p>${STRIPE_KEY}</p>` } });
    expect(put.status).toBe(200);
    expect(put.json.warnings).toEqual([
      { kind: 'secret', rule: 'htmldrop/stripe-key', where: 'html', line: 2, excerpt: 'sk_l****************dcX2' },
    ]);
    const legacy = await h.call('PUT', `/api/prototypes/${slug}`, { token, body: { html: leaky } });
    expect(legacy.status).toBe(200);
    expect(legacy.json.warnings.map((w: { line: number }) => w.line)).toEqual([3, 4]);
    const clean = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('v4') } });
    expect(clean.json).not.toHaveProperty('warnings');
    const restored = await h.call('POST', `/api/drops/${slug}/v/2/restore`, { token });
    expect(restored.status).toBe(200);
    expect(restored.json.latest_version).toBe(5);
    expect(restored.json.warnings).toEqual(put.json.warnings);
    const kept = await h.services.store.listVersionWarnings(slug);
    expect([...kept.keys()].sort()).toEqual([2, 3, 5]);
    expect(kept.get(2)).toEqual(put.json.warnings);
    for (const secret of SECRETS) expect(JSON.stringify([...kept.values()])).not.toContain(secret);
  });

  it('scan: block refuses with 422 sensitive_content and stores nothing (POST and PUT)', async () => {
    const { slug } = (await h.call('POST', '/api/drops', { token, body: { title: 'R', html: page() } })).json;
    const before = await countDrops();
    const refused = await h.call('POST', '/api/drops', { token, body: { title: 'Costs', html: leaky, scan: 'block' } });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('sensitive_content');
    expect(refused.json.error.details.findings.map((f: { rule: string; line: number }) => [f.rule, f.line])).toEqual([
      ['htmldrop/aws-access-key-id', 3],
      ['database-connection-string/PostgreSQLConnection', 4],
    ]);
    for (const secret of SECRETS) expect(refused.text).not.toContain(secret);
    expect(await countDrops()).toBe(before);
    const put = await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: { html: leaky, title: 'New', scan: 'block' },
    });
    expect(put.status).toBe(422);
    const drop = (await h.call('GET', `/api/drops/${slug}`, { token })).json;
    expect([drop.latest_version, drop.title]).toEqual([1, 'R']);
    expect((await h.call('GET', `/api/drops/${slug}/versions`, { token })).json).toHaveLength(1);
    expect(await h.services.store.listVersionWarnings(slug)).toEqual(new Map());
    // A clean write in block mode goes through.
    expect(
      (await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('ok'), scan: 'block' } })).status,
    ).toBe(200);
  });

  it('a version’s text files are looked at too (files/<path>), its binary files not; block refuses them', async () => {
    const created = await h.call('POST', '/api/drops', {
      token,
      body: {
        title: 'Folder',
        html: page(),
        files: {
          'js/app.js': { content: `const a = 1;\nconst key = '${AWS_KEY}';\n` },
          'img/a.png': { content: Buffer.from(`x${AWS_KEY}`).toString('base64'), encoding: 'base64' },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.json.warnings).toEqual([
      expect.objectContaining({
        kind: 'secret',
        rule: 'htmldrop/aws-access-key-id',
        where: 'files/js/app.js',
        line: 2,
      }),
    ]);
    for (const secret of SECRETS) expect(created.text).not.toContain(secret);
    const slug = created.json.slug as string;
    const blocked = await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: { html: page(), files: { 'data.json': { content: `{"k":"${AWS_KEY}"}` } }, scan: 'block' },
    });
    expect(blocked.status).toBe(422);
    expect(blocked.json.error.code).toBe('sensitive_content');
  });

  it('no secret reaches the logs, at the most verbose level, whatever the answer', async () => {
    let logged = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    const app = await buildApp(h.services, { logger: { level: 'trace', stream } });
    await app.ready();
    const send = (method: 'POST' | 'PUT', url: string, body: object) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload: body });
    const created = await send('POST', '/api/drops', { title: 'Costs', html: leaky });
    const slug = JSON.parse(created.body).slug;
    const answers = [
      created,
      await send('POST', '/api/drops', { title: 'Costs', html: leaky, scan: 'block' }),
      await send('PUT', `/api/drops/${slug}`, { html: `<p>${STRIPE_KEY}</p>`, scan: 'block' }),
      await send('PUT', `/api/drops/${slug}`, { html: `<p>${STRIPE_KEY}</p>`, scan: 'nope' }),
    ];
    // A write that fails after the look (the database gone) is logged with its error: still no secret.
    await h.store.close();
    answers.push(await send('POST', '/api/drops', { title: 'Costs', html: leaky }));
    await app.close();
    expect(answers.map((a) => a.statusCode)).toEqual([201, 422, 422, 400, 500]);
    expect(logged).toContain('request failed');
    for (const secret of SECRETS) {
      expect(logged).not.toContain(secret);
      for (const answer of answers) expect(answer.body).not.toContain(secret);
    }
  });

  it('the console shows each version’s warnings, masked, and nothing for a clean drop', async () => {
    const { slug } = (await h.call('POST', '/api/drops', { token, body: { title: 'Costs', html: leaky } })).json;
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('clean') } });
    const cookie = await consoleCookie('alice');
    const shown = await h.app.inject({ method: 'GET', url: `/console/drops/${slug}`, headers: { cookie } });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<h2 id="warnings-h">Warnings</h2>');
    expect(shown.body).toContain('href="#warnings-v1">2 warnings</a>');
    expect(shown.body).toContain('htmldrop/aws-access-key-id</span> in <span class="mono">html</span>, line 3');
    expect(shown.body).toContain('AKIA************W5FG');
    for (const secret of SECRETS) expect(shown.body).not.toContain(secret);
    const clean = (await h.call('POST', '/api/drops', { token, body: { title: 'Clean', html: page() } })).json.slug;
    const other = await h.app.inject({ method: 'GET', url: `/console/drops/${clean}`, headers: { cookie } });
    expect(other.body).not.toContain('id="warnings"');
  });
});

describe('HTMLDROP_SCAN=block', () => {
  beforeEach(async () => {
    h = await createHarness({ env: { HTMLDROP_SCAN: 'block' } });
    token = await h.token();
  });
  afterEach(async () => {
    await h.close();
  });

  it('refuses every write that carries a finding, even one asking for warn, and restore too; nothing stored', async () => {
    const { slug } = (await h.call('POST', '/api/drops', { token, body: { title: 'R', html: page() } })).json;
    const before = await countDrops();
    for (const scan of [undefined, 'warn']) {
      const body = { title: 'Costs', html: leaky, ...(scan === undefined ? {} : { scan }) };
      const refused = await h.call('POST', '/api/drops', { token, body });
      expect(refused.status).toBe(422);
      expect(refused.json.error.code).toBe('sensitive_content');
    }
    expect((await h.call('POST', '/api/prototypes', { token, body: { title: 'L', html: leaky } })).status).toBe(422);
    expect((await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: leaky, scan: 'warn' } })).status).toBe(
      422,
    );
    expect(await countDrops()).toBe(before);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.latest_version).toBe(1);
  });
});

/** Signs `login` in to the console through the local provider, as a browser does; the session cookie. */
async function consoleCookie(login: string): Promise<string> {
  const start = await h.app.inject({ method: 'GET', url: '/console/login?next=/console' });
  const signin = String([start.headers['set-cookie'] ?? []].flat()[0] ?? '').split(';')[0] ?? '';
  const state = new URL(String(start.headers.location), 'http://drops.test').searchParams.get('state') ?? '';
  const done = await h.app.inject({
    method: 'POST',
    url: '/verify/callback',
    headers: { cookie: signin, origin: 'http://drops.test', 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ state, username: login }).toString(),
  });
  const set = [done.headers['set-cookie'] ?? []].flat().find((c) => String(c).startsWith('hd_web=')) ?? '';
  return String(set).split(';')[0] ?? '';
}
