/**
 * The MCP server's version history and safe writes against the real service: diff, restore, if_match, expires; and
 * the drop's own origin and network policy (content_url, network).
 */
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

describe('own origin and network policy', () => {
  it('publish and update offer network: "open", "none" or 1 to 10 origins, described for an agent', async () => {
    const { tools } = await mcp.client.listTools();
    for (const name of ['publish', 'update']) {
      const network = tools.find((t) => t.name === name)?.inputSchema.properties?.network as {
        anyOf: { type: string; enum?: string[]; minItems?: number; maxItems?: number }[];
        description: string;
      };
      expect(network.anyOf).toEqual([
        expect.objectContaining({ type: 'string', enum: ['open', 'none'] }),
        expect.objectContaining({ type: 'array', minItems: 1, maxItems: 10 }),
      ]);
      expect(network.description).toContain(
        'set none for sensitive reports: its own requests (fetch, images, scripts, form posts) reach no other site',
      );
    }
    expect(tools.find((t) => t.name === 'publish')?.description).toContain('content_url');
  });

  it('publish, upsert and update set the policy; drops carry their content_url', async () => {
    const published = await call(mcp, 'publish', { title: 'Sealed', html: PAGE('s'), network: 'none' });
    expect(published.isError, JSON.stringify(published.json)).toBe(false);
    expect(published.json.drop.network).toBe('none');
    expect(published.json.drop.content_url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+\/$/);
    const slug = published.json.drop.slug;
    const cdns = ['https://cdn.jsdelivr.net', 'https://unpkg.com'];
    const listed = await call(mcp, 'update', { slug, html: PAGE('s2'), network: cdns });
    expect(listed.json.drop).toMatchObject({ latest_version: 2, network: cdns });
    const kept = await call(mcp, 'update', { slug, html: PAGE('s3') });
    expect(kept.json.drop).toMatchObject({ latest_version: 3, network: cdns });
    const got = await call(mcp, 'get', { slug });
    expect(got.json.drop).toMatchObject({ network: cdns, content_url: published.json.drop.content_url });

    const upsert_by = { net: 'mcp' };
    const created = await call(mcp, 'publish', { title: 'U', html: PAGE('u'), upsert_by, network: [cdns[0]] });
    expect(created.json).toMatchObject({ action: 'created', drop: { network: [cdns[0]] } });
    const opened = await call(mcp, 'publish', { title: 'U', html: PAGE('u2'), upsert_by, network: 'open' });
    expect(opened.json).toMatchObject({ action: 'updated', drop: { latest_version: 2, network: 'open' } });
  });

  it('a malformed origin is a usage error saying how to write it; nothing is written', async () => {
    const bad = await call(mcp, 'publish', { title: 'Bad', html: PAGE('b'), network: ['https://unpkg.com/react'] });
    expect(bad.isError).toBe(true);
    expect(bad.json.error).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/^network "https:\/\/unpkg\.com\/react": .*no path .*write https:\/\/unpkg\.com/),
    });
    const slug = (await call(mcp, 'publish', { title: 'Kept', html: PAGE('k') })).json.drop.slug;
    const refused = await call(mcp, 'update', { slug, html: PAGE('k2'), network: ['https://unpkg.com/'] });
    expect(refused.json.error).toMatchObject({ code: 'usage', message: expect.stringContaining('trailing slash') });
    expect((await call(mcp, 'get', { slug })).json.drop).toMatchObject({ latest_version: 1, network: 'open' });
    // Not "open", "none" or a list: refused by the tool's input schema before the tool runs.
    const closed = await mcp.client.callTool({
      name: 'publish',
      arguments: { title: 'X', html: PAGE('x'), network: 'closed' },
    });
    expect(closed.isError).toBe(true);
    expect(JSON.stringify(closed.content)).toContain('network');
    expect((await call(mcp, 'list', { metadata: {} })).json.data.map((d) => d.title)).not.toContain('Bad');
  });
});
