/** The MCP server's version history and safe writes against the real service: diff, restore, if_match, expires. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE, removeTempDirs, type Sandbox } from '../../client/test/run.js';
import { type Service, startService } from '../../client/test/service.js';
import { type Connection, call, connect } from './connection.js';

let service: Service;
let box: Sandbox & { token: string };
let mcp: Connection;

beforeAll(async () => {
  service = await startService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });
  box = await service.signedIn('agent');
  mcp = await connect(box);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
  removeTempDirs();
});

/** A drop with versions 1 and 2 ("first" then "second"). */
async function twoVersions(title: string): Promise<string> {
  const created = await call(mcp, 'publish', { title, html: PAGE('first') });
  const slug = created.json.drop.slug;
  expect((await call(mcp, 'update', { slug, html: PAGE('second') })).json.drop.latest_version).toBe(2);
  return slug;
}

describe('history tools', () => {
  it('lists diff (read-only) and restore, and expires / if_match on the writing tools', async () => {
    const { tools } = await mcp.client.listTools();
    const byName = (name: string) => tools.find((t) => t.name === name);
    expect(byName('diff')?.annotations?.readOnlyHint).toBe(true);
    expect(byName('restore')?.annotations?.readOnlyHint).toBe(false);
    expect(byName('restore')?.inputSchema.required).toEqual(['slug', 'version']);
    expect(Object.keys(byName('publish')?.inputSchema.properties ?? {})).toContain('expires');
    expect(Object.keys(byName('update')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['expires', 'if_match']),
    );
    expect(mcp.client.getInstructions()).toContain('`restore`');
  });

  it('diff returns the unified diff and the counts; from and to default to the last two versions', async () => {
    const slug = await twoVersions('Diffed');
    const result = await call(mcp, 'diff', { slug });
    expect(result.isError, JSON.stringify(result.json)).toBe(false);
    expect(result.json).toMatchObject({ from: 1, to: 2, added: 1, removed: 1 });
    expect(result.json.unified).toMatch(/^-.*<p>first<\/p>/m);
    expect(result.json.unified).toMatch(/^\+.*<p>second<\/p>/m);
    const reversed = await call(mcp, 'diff', { slug, from: 2, to: 1 });
    expect(reversed.json.unified).toMatch(/^\+.*<p>first<\/p>/m);
    const missing = await call(mcp, 'diff', { slug, from: 7 });
    expect(missing.isError).toBe(true);
    expect(missing.json.error).toMatchObject({ code: 'version_not_found', hint: expect.stringContaining('get') });
  });

  it('restore makes version n the newest; with a stale if_match it changes nothing and says version_conflict', async () => {
    const slug = await twoVersions('Restored');
    const restored = await call(mcp, 'restore', { slug, version: 1, if_match: 2 });
    expect(restored.isError, JSON.stringify(restored.json)).toBe(false);
    expect(restored.json).toMatchObject({ action: 'restored', restored_version: 1, drop: { latest_version: 3 } });
    expect(await (await fetch(`${restored.json.drop.raw_url}?v=3`)).text()).toContain('<p>first</p>');
    const stale = await call(mcp, 'restore', { slug, version: 2, if_match: 2 });
    expect(stale.isError).toBe(true);
    expect(stale.json.error).toMatchObject({
      code: 'version_conflict',
      status: 412,
      details: { latest_version: 3 },
      hint: expect.stringContaining('if_match'),
    });
    const got = await call(mcp, 'get', { slug });
    expect(got.json.drop.latest_version).toBe(3);
  });

  it('update with if_match uploads only onto that version; delete with if_match likewise', async () => {
    const slug = await twoVersions('Guarded');
    const stale = await call(mcp, 'update', { slug, html: PAGE('third'), if_match: 1 });
    expect(stale.json.error).toMatchObject({ code: 'version_conflict', details: { latest_version: 2 } });
    const ok = await call(mcp, 'update', { slug, html: PAGE('third'), if_match: 2 });
    expect(ok.json.drop.latest_version).toBe(3);
    expect((await call(mcp, 'delete', { slug, if_match: 2 })).json.error?.code).toBe('version_conflict');
    expect((await call(mcp, 'delete', { slug, version: 1, if_match: 3 })).json.error?.code).toBe('usage');
    expect((await call(mcp, 'delete', { slug, if_match: 3 })).json).toEqual({ deleted: 'drop', slug });
  });

  it('expires on publish, upsert and update sets, changes and clears the expiry; bad values are usage errors', async () => {
    const published = await call(mcp, 'publish', { title: 'Expiring', html: PAGE('e'), expires: '12h' });
    expect(published.json.drop.expires_at).toBeGreaterThan(Date.now() + 11 * 3_600_000);
    const slug = published.json.drop.slug;
    const cleared = await call(mcp, 'update', { slug, html: PAGE('e2'), expires: 'never' });
    expect(cleared.json.drop).toMatchObject({ latest_version: 2, expires_at: null });
    const upserted = await call(mcp, 'publish', {
      title: 'U',
      html: PAGE('u'),
      upsert_by: { exp: 'mcp' },
      expires: '7d',
    });
    expect(upserted.json).toMatchObject({ action: 'created' });
    expect(upserted.json.drop.expires_at).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    expect(upserted.json.conflicts).toBeUndefined();
    const again = await call(mcp, 'publish', {
      title: 'U',
      html: PAGE('u2'),
      upsert_by: { exp: 'mcp' },
      expires: 'never',
    });
    expect(again.json).toMatchObject({ action: 'updated', drop: { latest_version: 2, expires_at: null } });
    const bad = await call(mcp, 'publish', { title: 'Bad', html: PAGE('b'), expires: 'tomorrow' });
    expect(bad.isError).toBe(true);
    expect(bad.json.error).toMatchObject({ code: 'usage', message: expect.stringContaining('expires "tomorrow"') });
  });
});
