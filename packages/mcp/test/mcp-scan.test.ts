/**
 * Secrets and personal data through the MCP tools (docs/api.md, "A look before publishing"): publish and update return
 * the findings as warnings with what to change, and `scan: "block"` publishes nothing, with a hint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, type Sandbox } from '../../client/test/run.js';
import { type Service, startService } from '../../client/test/service.js';
import { type Connection, call, connect } from './connection.js';

// Built at run time, so that no scanner of this repository finds it in its source.
const AWS_KEY = ['AKIA', 'Z3MSJV4WWNKWW5FG'].join('');
/** The key on line 3. */
const LEAKY = `<!doctype html>\n<html><head><title>Costs</title></head><body>\n<pre>AWS_ACCESS_KEY_ID=${AWS_KEY}</pre>\n</body></html>\n`;

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

describe('the look before publishing', () => {
  it('publish and update offer scan and return the findings as warnings saying what to change; never the key', async () => {
    const { tools } = await mcp.client.listTools();
    for (const name of ['publish', 'update']) {
      expect(tools.find((t) => t.name === name)?.inputSchema.properties?.scan).toMatchObject({
        enum: ['warn', 'block'],
      });
    }
    const published = await call(mcp, 'publish', { title: 'Costs', html: LEAKY });
    expect(published.isError, JSON.stringify(published.json)).toBe(false);
    expect(published.json.drop.warnings).toEqual([
      { kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'html', line: 3, excerpt: 'AKIA************W5FG' },
    ]);
    expect(published.json.warnings).toEqual([
      expect.objectContaining({
        code: 'sensitive_content',
        rule: 'htmldrop/aws-access-key-id',
        where: 'html',
        line: 3,
      }),
    ]);
    expect(published.json.warnings[0]?.message).toMatch(
      /^html line 3: a secret \(htmldrop\/aws-access-key-id\): AKIA\*+W5FG\. This version is public now\. Publish a new version without it/,
    );
    expect(JSON.stringify(published.json)).not.toContain(AWS_KEY);
    const updated = await call(mcp, 'update', { slug: published.json.drop.slug, html: LEAKY, comments: 'off' });
    expect(updated.isError).toBe(false);
    expect(updated.json.drop.latest_version).toBe(2);
    expect(updated.json.warnings.map((w: { code: string }) => w.code)).toEqual(['sensitive_content']);
  });

  it('scan: "block" publishes nothing and explains what to remove', async () => {
    const refused = await call(mcp, 'publish', { title: 'Costs', html: LEAKY, scan: 'block' });
    expect(refused.isError).toBe(true);
    expect(refused.json.error).toMatchObject({
      code: 'sensitive_content',
      status: 422,
      details: { findings: [{ rule: 'htmldrop/aws-access-key-id', where: 'html', line: 3 }] },
      hint: expect.stringContaining('Nothing was published'),
    });
    expect(JSON.stringify(refused.json)).not.toContain(AWS_KEY);
    const listed = await call(mcp, 'list', {});
    expect(listed.json.data.map((d: { title: string }) => d.title)).toEqual(['Costs']);
    const slug = listed.json.data[0]?.slug;
    const update = await call(mcp, 'update', { slug, html: LEAKY, scan: 'block' });
    expect(update.json.error.code).toBe('sensitive_content');
  });
});
