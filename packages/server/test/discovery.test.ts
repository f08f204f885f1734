/** What an agent reads first: onboarding, llms.txt, the agent card and the OpenAPI document. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('GET /api/onboard', () => {
  it('answers Markdown by default, naming the base URL and the publishing steps', async () => {
    const reply = await h.call('GET', '/api/onboard');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/markdown/);
    expect(reply.text).toContain('http://drops.test/api/drops');
    expect(reply.text).toMatch(/complete, standalone HTML document/);
    expect(reply.text).toContain('Authorization: Bearer');
  });

  it('shows the remote MCP URL with one-line adds, and the Markdown copy', async () => {
    const reply = await h.call('GET', '/api/onboard');
    expect(reply.text).toContain('claude mcp add --transport http htmldrop http://drops.test/mcp');
    expect(reply.text).toContain('gemini mcp add --transport http htmldrop http://drops.test/mcp');
    expect(reply.text).toContain(`code --add-mcp '{"name":"htmldrop","type":"http","url":"http://drops.test/mcp"}'`);
    expect(reply.text).toContain('curl http://drops.test/p/<slug>.md');
  });

  it('answers JSON with instructions and public_url for Accept: application/json', async () => {
    const reply = await h.call('GET', '/api/onboard', { headers: { accept: 'application/json' } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json).toEqual({
      instructions: expect.stringContaining('# htmldrop'),
      public_url: 'http://drops.test',
    });
  });
});

describe('agent discovery files', () => {
  it('serves /.well-known/agent-card.json with schema_version "1"', async () => {
    const reply = await h.call('GET', '/.well-known/agent-card.json');
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ schema_version: '1', name: 'htmldrop', url: 'http://drops.test' });
    expect(reply.json.mcp).toMatchObject({ url: 'http://drops.test/mcp', transport: 'streamable-http' });
    expect(reply.json.mcp.tools).toContain('publish');
    expect(reply.json.authentication.oauth.authorization_server_metadata).toBe(
      'http://drops.test/.well-known/oauth-authorization-server',
    );
    expect(reply.json.capabilities.map((c: { path: string }) => c.path)).toContain('/p/{slug}.md');
  });

  it('serves /llms.txt', async () => {
    const reply = await h.call('GET', '/llms.txt');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    expect(reply.text).toMatch(/^# htmldrop/);
    expect(reply.text).toContain('Remote MCP: http://drops.test/mcp');
    expect(reply.text).toContain('GET http://drops.test/p/<slug>.md');
  });
});

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1, version 1.0.0, generated from the route schemas', async () => {
    const reply = await h.call('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    const doc = reply.json;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    for (const path of [
      '/api/drops',
      '/api/drops/{slug}',
      '/api/drops/{slug}/v/{n}',
      '/api/me',
      '/api/tokens/{id}',
      '/api/onboard',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    const create = doc.paths['/api/drops'].post;
    expect(create.security).toEqual([{ bearer: [] }]);
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['title', 'html']));
    expect(body.properties.title.maxLength).toBe(200);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
