/** The MCP server, spawned over stdio and driven by a real MCP client from the SDK, against the real service. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProjectToken, writeTokenFile } from '../../client/src/token-store.js';
import type { Comment } from '../../client/src/types.js';
import { PAGE, removeTempDirs, type Sandbox, sandbox, write } from '../../client/test/run.js';
import { type Service, startService } from '../../client/test/service.js';
import { type Connection, call, connect, MAIN } from './connection.js';

let service: Service;

/** Revokes a token through the API (as `htmldrop revoke` does) and returns it. */
async function revoke(token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}` };
  const me = (await (await fetch(`${service.baseUrl}/api/me`, { headers })).json()) as { token: { id: string } };
  const revoked = await fetch(`${service.baseUrl}/api/tokens/${me.token.id}`, { method: 'DELETE', headers });
  expect(revoked.status).toBe(204);
  return token;
}
let box: Sandbox & { token: string };
let mcp: Connection;

beforeAll(async () => {
  // More writes than the default 60 a minute: the comment tests add theirs to the publishing ones.
  service = await startService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });
  box = await service.signedIn('agent');
  mcp = await connect(box);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
  removeTempDirs();
});

describe('tools', () => {
  it('offers publish, update, list, get and delete, stating the standalone-document rule', async () => {
    const { tools } = await mcp.client.listTools();
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
    for (const name of ['publish', 'update']) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.description).toContain('ONE complete, standalone HTML document');
      expect(tool?.description).toContain('will NOT load');
      expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['html', 'file']));
    }
    expect(tools.find((t) => t.name === 'publish')?.inputSchema.required).toEqual(['title']);
    expect(tools.find((t) => t.name === 'delete')?.annotations?.destructiveHint).toBe(true);
    expect(tools.find((t) => t.name === 'list')?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'get_feedback')?.annotations?.readOnlyHint).toBe(true);
    // Under the 60 s request timeout of common MCP clients.
    expect(tools.find((t) => t.name === 'get_feedback')?.inputSchema.properties?.wait).toMatchObject({ maximum: 45 });
    // The tool set never changes.
    expect(mcp.client.getServerCapabilities()?.tools?.listChanged ?? false).toBe(false);
    for (const name of ['publish', 'update']) {
      const properties = tools.find((t) => t.name === name)?.inputSchema.properties ?? {};
      expect(Object.keys(properties)).toEqual(expect.arrayContaining(['resolves', 'comments']));
    }
    expect(mcp.client.getInstructions()).toContain('standalone HTML');
  });

  it('publishes HTML and returns the drop and warnings; the public URL serves it', async () => {
    const result = await call(mcp, 'publish', {
      title: 'From MCP',
      html: '<!doctype html><html><head><title>x</title></head><body><img src="chart.png"><p>mcp says hi</p></body></html>',
      metadata: { source: 'mcp' },
    });
    expect(result.isError, JSON.stringify(result.json)).toBe(false);
    expect(result.json).toMatchObject({
      action: 'created',
      drop: { title: 'From MCP', latest_version: 1, metadata: { source: 'mcp' } },
      warnings: [{ code: 'relative_reference' }],
    });
    const drop = result.json.drop;
    expect(await (await fetch(drop.raw_url)).text()).toContain('<p>mcp says hi</p>');
  });

  it('publishes a file given by path, relative to the working directory, with a passcode', async () => {
    write(box.cwd, 'report.html', PAGE('from a file'));
    const result = await call(mcp, 'publish', { title: 'File', file: 'report.html', passcode: 'sesame' });
    expect(result.isError, JSON.stringify(result.json)).toBe(false);
    expect(result.json.drop.locked).toBe(true);
    expect(result.json.warnings).toEqual([]);
  });

  it('upserts twice with the same tags: one drop, two versions', async () => {
    const args = { title: 'Weekly', upsert_by: { project: 'acme', kind: 'weekly' } };
    const first = await call(mcp, 'publish', { ...args, html: PAGE('week 1') });
    const second = await call(mcp, 'publish', { ...args, html: PAGE('week 2'), metadata: { week: '2' } });
    expect(first.json.action).toBe('created');
    expect(second.json).toMatchObject({ action: 'updated', drop: { slug: first.json.drop.slug, latest_version: 2 } });
    expect(second.json.drop.metadata).toEqual({ project: 'acme', kind: 'weekly', week: '2' });
    const got = await call(mcp, 'get', { slug: first.json.drop.slug });
    expect(got.json.versions.map((v) => v.version)).toEqual([2, 1]);
  });

  it('serializes concurrent upserts from two MCP server processes: still one drop', async () => {
    const other = await connect(box);
    try {
      const args = { title: 'Race', html: PAGE('race'), upsert_by: { race: 'mcp' } };
      const results = await Promise.all([call(mcp, 'publish', args), call(other, 'publish', args)]);
      expect(results.map((r) => r.json.action).sort()).toEqual(['created', 'updated']);
      const listed = await call(mcp, 'list', { metadata: { race: 'mcp' } });
      expect(listed.json.total_items).toBe(1);
      expect(listed.json.data[0]?.latest_version).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('lists with metadata filters, sorted and limited', async () => {
    const teams: [string, string][] = [
      ['red', '1'],
      ['red', '2'],
      ['blue', '1'],
    ];
    for (const [team, n] of teams) {
      await call(mcp, 'publish', { title: `${team}${n}`, html: PAGE(team), metadata: { team, n } });
    }
    const red = await call(mcp, 'list', { metadata: { team: 'red' }, sort_order: 'asc' });
    expect(red.json.data.map((d) => d.title)).toEqual(['red1', 'red2']);
    const one = await call(mcp, 'list', { metadata: { team: 'red', n: '2' } });
    expect(one.json.data.map((d) => d.title)).toEqual(['red2']);
    const limited = await call(mcp, 'list', { metadata: { team: 'red' }, limit: 1 });
    expect(limited.json).toMatchObject({ total_items: 2, data: [{ title: 'red2' }] });
  });

  it('updates by slug with context, gets a version, deletes a version, refuses the last one, deletes the drop', async () => {
    const created = await call(mcp, 'publish', { title: 'Versions', html: PAGE('v1'), metadata: { a: '1' } });
    const slug = created.json.drop.slug;
    const updated = await call(mcp, 'update', { slug, html: PAGE('v2'), context: 'why v2', metadata: { b: '2' } });
    expect(updated.json.drop).toMatchObject({ latest_version: 2, metadata: { a: '1', b: '2' } });
    const got = await call(mcp, 'get', { slug, version: 2 });
    expect(got.json.version).toMatchObject({ version: 2, context: 'why v2', is_latest: true });
    const removed = await call(mcp, 'delete', { slug, version: 2 });
    expect(removed.json).toMatchObject({ deleted: 'version', drop: { latest_version: 1 } });
    const last = await call(mcp, 'delete', { slug, version: 1 });
    expect(last.isError).toBe(true);
    expect(last.json.error).toMatchObject({
      code: 'last_version_cannot_be_deleted',
      status: 409,
      hint: expect.any(String),
    });
    expect((await call(mcp, 'delete', { slug })).json).toEqual({ deleted: 'drop', slug });
    const gone = await call(mcp, 'get', { slug });
    expect(gone.isError).toBe(true);
    expect(gone.json.error.code).toBe('not_found');
  });
});

/** The owner's comment on `slug`, through the API (as a viewer's would arrive). */
async function comment(slug: string, body: string): Promise<Comment> {
  const reply = await fetch(`${service.baseUrl}/api/drops/${slug}/comments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${box.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body }),
  });
  expect(reply.status).toBe(201);
  return (await reply.json()) as Comment;
}

describe('the feedback loop', () => {
  it('get_feedback returns the comments after since, with next_since; on one drop or all', async () => {
    const created = await call(mcp, 'publish', { title: 'Loop', html: PAGE('v1'), comments: 'open' });
    expect(created.json.drop.comments).toBe('open');
    const slug = created.json.drop.slug;
    const none = await call(mcp, 'get_feedback', { slug });
    expect(none.json).toEqual({ data: [], next_since: 0 });
    const first = await comment(slug, 'first');
    const second = await comment(slug, 'second');
    const all = await call(mcp, 'get_feedback', { slug });
    expect(all.isError, JSON.stringify(all.json)).toBe(false);
    expect(all.json).toEqual({ data: [first, second], next_since: second.created_at });
    const newer = await call(mcp, 'get_feedback', { slug, since: first.created_at });
    expect(newer.json.data.map((c) => c.id)).toEqual([second.id]);
    const everywhere = await call(mcp, 'get_feedback', { all: true, since: first.created_at });
    expect(everywhere.json.data).toEqual([{ ...second, slug }]);
    const both = await call(mcp, 'get_feedback', { slug, all: true });
    expect(both.isError).toBe(true);
    expect(both.json.error.code).toBe('usage');
    const tooLong = await mcp.client.callTool({ name: 'get_feedback', arguments: { slug, wait: 61 } });
    expect(tooLong.isError).toBe(true);
  });

  it('get_feedback with wait holds until a comment arrives', async () => {
    const slug = (await call(mcp, 'publish', { title: 'Wait', html: PAGE('w') })).json.drop.slug;
    const since = Date.now();
    const started = Date.now();
    const waiting = call(mcp, 'get_feedback', { slug, since, wait: 30 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const posted = Date.now();
    const made = await comment(slug, 'while you waited');
    const answer = await waiting;
    expect(answer.json).toEqual({ data: [made], next_since: made.created_at });
    expect(Date.now() - posted).toBeLessThan(2000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    const quiet = Date.now();
    const nothing = await call(mcp, 'get_feedback', { slug, since: made.created_at, wait: 1 });
    expect(nothing.json).toEqual({ data: [], next_since: made.created_at });
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(900);
  });

  it('update and publish with upsert_by take resolves and comments; resolve_comment resolves one', async () => {
    const tags = { loop: 'mcp' };
    const first = await call(mcp, 'publish', { title: 'Upsert loop', html: PAGE('v1'), upsert_by: tags });
    const slug = first.json.drop.slug;
    const [a, b, c] = [await comment(slug, 'a'), await comment(slug, 'b'), await comment(slug, 'c')];
    const plain = await call(mcp, 'publish', { title: 'x', html: PAGE('x'), resolves: [a.id] });
    expect(plain.isError).toBe(true);
    expect(plain.json.error.code).toBe('usage');
    const upserted = await call(mcp, 'publish', {
      title: 'Upsert loop',
      html: PAGE('v2'),
      upsert_by: tags,
      resolves: [a.id],
      comments: 'off',
    });
    expect(upserted.isError, JSON.stringify(upserted.json)).toBe(false);
    expect(upserted.json).toMatchObject({ action: 'updated', drop: { slug, latest_version: 2, comments: 'off' } });
    const unknown = await call(mcp, 'update', { slug, html: PAGE('v3'), resolves: ['c_nosuchcomment000'] });
    expect(unknown.isError).toBe(true);
    expect(unknown.json.error.code).toBe('invalid_arg');
    const updated = await call(mcp, 'update', { slug, html: PAGE('v3'), resolves: [b.id], comments: 'open' });
    expect(updated.json.drop).toMatchObject({ latest_version: 3, comments: 'open' });
    const resolved = await call(mcp, 'resolve_comment', { slug, comment_id: c.id });
    expect(resolved.json).toMatchObject({ id: c.id, resolved_in_version: 3 });
    const listed = await call(mcp, 'get_feedback', { slug });
    expect(listed.json.data.map((x) => [x.id, x.resolved_in_version])).toEqual([
      [a.id, 2],
      [b.id, 3],
      [c.id, 3],
    ]);
    const missing = await call(mcp, 'resolve_comment', { slug, comment_id: 'c_nosuchcomment000' });
    expect(missing.json.error.code).toBe('not_found');
  });

  it('get_stats returns the read receipts', async () => {
    const drop = (await call(mcp, 'publish', { title: 'Stats', html: PAGE('s') })).json.drop;
    const result = await call(mcp, 'get_stats', { slug: drop.slug });
    expect(result.isError, JSON.stringify(result.json)).toBe(false);
    expect(result.json).toEqual({
      links: [],
      views: 0,
      unique_viewers: 0,
      first_viewed_at: null,
      last_viewed_at: null,
      versions: [{ version: 1, views: 0, unique_viewers: 0, last_viewed_at: null }],
    });
    expect((await call(mcp, 'get_stats', { slug: 'nosuchdrop' })).json.error.code).toBe('not_found');
  });
});

describe('errors are isError results naming the code', () => {
  it('refuses bad documents before sending them', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ title: 'x' }, 'usage'],
      [{ title: 'x', html: PAGE('x'), file: 'report.html' }, 'usage'],
      [{ title: 'x', html: '# Markdown\n\nnot html' }, 'not_html'],
      [{ title: 'x', file: 'missing.html' }, 'file_not_found'],
      [{ title: 'x', file: '.' }, 'is_directory'],
    ];
    for (const [args, code] of cases) {
      const result = await call(mcp, 'publish', args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(result.json.error.code).toBe(code);
    }
    const invalid = await mcp.client.callTool({ name: 'publish', arguments: { html: PAGE('no title') } });
    expect(invalid.isError).toBe(true);
  });

  it('refuses an upsert that matches several drops', async () => {
    await call(mcp, 'publish', { title: 'twin', html: PAGE('1'), metadata: { twin: 'mcp' } });
    await call(mcp, 'publish', { title: 'twin', html: PAGE('2'), metadata: { twin: 'mcp' } });
    const result = await call(mcp, 'publish', { title: 'twin', html: PAGE('3'), upsert_by: { twin: 'mcp' } });
    expect(result.isError).toBe(true);
    expect(result.json.error).toMatchObject({ code: 'upsert_ambiguous', details: { total: 2 } });
  });

  it('without a token, lists the places looked at and says how to sign in with the CLI', async () => {
    const emptyBox = sandbox(service.baseUrl);
    const empty = await connect(emptyBox);
    try {
      const result = await call(empty, 'list', {});
      expect(result.isError).toBe(true);
      const user = path.join(emptyBox.home, '.config', 'htmldrop', 'token');
      expect(result.json.error).toMatchObject({
        code: 'no_token',
        message: `No token found: looked at the --token flag, the file ${path.join(fs.realpathSync(emptyBox.cwd), '.htmldrop', 'token')}, the HTMLDROP_TOKEN environment variable and the file ${user}. Run \`htmldrop login\` to sign in; it writes ${user}.`,
      });
      expect(result.json.error.hint).toContain('htmldrop CLI');
      expect(result.json.error.hint).toContain(
        `npx --yes --package=${service.baseUrl}/cli/htmldrop.tgz htmldrop login`,
      );
      expect(result.json.error.hint).toContain('npx --no-install htmldrop login');
    } finally {
      await empty.close();
    }
  });

  it('with a revoked token from HTMLDROP_TOKEN: names the variable and how to sign in again', async () => {
    const token = await service.mintToken('agent');
    const revoked = await connect(sandbox(service.baseUrl), { HTMLDROP_TOKEN: token });
    try {
      expect((await call(revoked, 'list', {})).isError).toBe(false);
      await revoke(token);
      const result = await call(revoked, 'list', {});
      expect(result.isError).toBe(true);
      expect(result.json.error).toMatchObject({
        code: 'invalid_token',
        status: 401,
        message:
          'The service refused the token from the HTMLDROP_TOKEN environment variable: it is revoked, unknown or malformed. Run `htmldrop login` to sign in again, then unset HTMLDROP_TOKEN (or set it to the new token).',
        details: { token_source: 'HTMLDROP_TOKEN' },
      });
      expect(result.json.error.hint).toContain('sign in again with the htmldrop CLI');
      expect(result.json.error.hint).toContain("MCP client's configuration");
    } finally {
      await revoked.close();
    }
  });

  it('with a revoked token from a file or --token: names it, and the file is read again after signing in', async () => {
    const lapsed = sandbox(service.baseUrl);
    const file = path.join(lapsed.home, '.config', 'htmldrop', 'token');
    await writeTokenFile(file, await revoke(await service.mintToken('agent')));
    const fromFile = await connect(lapsed);
    try {
      const result = await call(fromFile, 'publish', { title: 'x', html: PAGE('x') });
      expect(result.isError).toBe(true);
      expect(result.json.error).toMatchObject({
        code: 'invalid_token',
        message: `The service refused the token from the file ${file}: it is revoked, unknown or malformed. Run \`htmldrop login\` to sign in again; it replaces that file.`,
        details: { token_source: file },
      });
      expect(result.json.error.hint).toContain('reads the token file again on every tool call');
      // The user signs in again (as `htmldrop login` would write it): the next call works, without a restart.
      await writeTokenFile(file, await service.mintToken('agent'));
      expect((await call(fromFile, 'list', {})).isError).toBe(false);
      // A project token, ./.htmldrop/token in the server's working directory, wins and is named likewise.
      await writeProjectToken(lapsed.cwd, await revoke(await service.mintToken('agent')));
      const project = await call(fromFile, 'list', {});
      const cwd = fs.realpathSync(lapsed.cwd);
      expect(project.json.error.message).toBe(
        `The service refused the token from the file ${path.join(cwd, '.htmldrop', 'token')}: it is revoked, unknown or malformed. Run \`htmldrop login --project\` in ${cwd} to sign in again; it replaces that file.`,
      );
    } finally {
      await fromFile.close();
    }
    const fromFlag = await connect(sandbox(service.baseUrl), {}, [
      '--token',
      await revoke(await service.mintToken('agent')),
    ]);
    try {
      const result = await call(fromFlag, 'get', { slug: 'anything' });
      expect(result.json.error).toMatchObject({
        code: 'invalid_token',
        message:
          'The service refused the token from the --token flag: it is revoked, unknown or malformed. Run `htmldrop login` to sign in again, then stop passing --token (or pass the new token).',
        details: { token_source: '--token' },
      });
      expect(result.json.error.hint).toContain("This MCP server's --token is set in the MCP client's configuration");
    } finally {
      await fromFlag.close();
    }
  });

  it('wrote nothing but protocol on stdout', () => {
    expect(mcp.errors).toEqual([]);
    expect(mcp.stderr()).toContain('htmldrop-mcp 1.0.0: serving');
    expect(fs.existsSync(MAIN)).toBe(true);
  });
});
