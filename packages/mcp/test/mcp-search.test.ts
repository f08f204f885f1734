/** The `search` tool (docs/api.md, "Search"): an agent finds a drop by a phrase from its body. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, type Sandbox } from '../../client/test/run.js';
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

const doc = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

describe('search', () => {
  it('is offered read-only, with a query of at most 200 characters', async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === 'search');
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    expect(tool?.inputSchema.required).toEqual(['query']);
    expect(tool?.inputSchema.properties?.query).toMatchObject({ type: 'string', maxLength: 200 });
  });

  it("finds last week's report by a phrase from its body, best match first, with the snippet", async () => {
    const report = await call(mcp, 'publish', {
      title: 'Weekly status',
      html: doc('<h1>Week 47</h1><p>Latency of the checkout service fell to 180 ms after the cache change.</p>'),
    });
    expect(report.isError, JSON.stringify(report.json)).toBe(false);
    const titled = await call(mcp, 'publish', { title: 'Checkout latency plan', html: doc('<p>Next steps.</p>') });
    expect(titled.isError).toBe(false);

    const found = await call(mcp, 'search', { query: 'checkout latency' });
    expect(found.isError, JSON.stringify(found.json)).toBe(false);
    expect(found.json.total_items).toBe(2);
    expect(found.json.data.map((d) => d.slug)).toEqual([titled.json.drop.slug, report.json.drop.slug]);
    const phrase = await call(mcp, 'search', { query: 'fell to 180 ms after the cache' });
    expect(phrase.json.data.map((d) => [d.slug, d.match?.fields])).toEqual([[report.json.drop.slug, ['content']]]);
    expect(phrase.json.data[0]?.match?.snippet).toContain('Latency of the checkout service fell to 180 ms');

    const none = await call(mcp, 'search', { query: '"checkout" OR -latency*' });
    expect(none.isError).toBe(false);
    expect(none.json.total_items).toBe(0);
  });
});
