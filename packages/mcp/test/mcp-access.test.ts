/**
 * Who can see a drop through the MCP tools (docs/api.md, "Who can see a drop"): publish with `visibility` and
 * `allow`, `create_link` for one person, and `get_access` telling her view through the link.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE, removeTempDirs, type Sandbox } from '../../client/test/run.js';
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

describe('visibility, links and the access log', () => {
  it('publishes a people drop, makes a link for Dana, and reports her view through it', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.find((t) => t.name === 'publish')?.inputSchema.properties?.visibility).toMatchObject({
      enum: ['public', 'signed_in', 'people'],
    });
    expect(tools.find((t) => t.name === 'get_access')?.annotations?.readOnlyHint).toBe(true);
    const published = await call(mcp, 'publish', {
      title: 'For the client',
      html: PAGE('numbers'),
      visibility: 'people',
      allow: ['dana@client.example'],
    });
    expect(published.isError, JSON.stringify(published.json)).toBe(false);
    const { drop } = published.json;
    expect(drop).toMatchObject({ visibility: 'people', allow: ['dana@client.example'] });
    expect((await fetch(drop.url)).status).toBe(401);
    const link = await call(mcp, 'create_link', { slug: drop.slug, label: 'Dana' });
    expect(link.isError, JSON.stringify(link.json)).toBe(false);
    expect((await fetch((link.json as unknown as { url: string }).url)).status).toBe(200);
    const access = (await call(mcp, 'get_access', { slug: drop.slug })) as unknown as {
      isError: boolean;
      json: { links: unknown[]; access: unknown[] };
    };
    expect(access.isError, JSON.stringify(access.json)).toBe(false);
    expect(access.json.links).toEqual([expect.objectContaining({ label: 'Dana', views: 1 })]);
    expect(access.json.access[0]).toMatchObject({ outcome: 'viewed', who: { kind: 'link', name: 'Dana' } });
    expect(access.json.access[1]).toMatchObject({ outcome: 'refused', reason: 'sign_in_required' });
  });
});
