/** Driving the built MCP server over stdio with a real MCP client from the SDK: connect, call a tool, read its JSON. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import type { Comment, Drop, Version, VersionListItem } from '../../client/src/types.js';
import type { Sandbox } from '../../client/test/run.js';

export const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

export interface Connection {
  readonly client: Client;
  /** Transport errors: anything on stdout that is not protocol lands here. */
  readonly errors: Error[];
  stderr(): string;
  close(): Promise<void>;
}

export async function connect(
  box: Sandbox,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<Connection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, ...args],
    env: { ...box.env, ...env },
    cwd: box.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const errors: Error[] = [];
  const client = new Client({ name: 'htmldrop-test', version: '1.0.0' });
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, errors, stderr: () => stderr, close: () => client.close() };
}

/** The union of the tools' JSON answers; each test reads the fields of the tool it called. */
export interface ToolJson {
  readonly action: string;
  readonly drop: Drop;
  readonly warnings: { code: string; message: string }[];
  readonly data: (Drop & Comment)[];
  readonly total_items: number;
  readonly versions: VersionListItem[];
  readonly version: Version;
  readonly deleted: string;
  readonly slug: string;
  readonly next_since: number;
  readonly id: string;
  readonly resolved_in_version: number | null;
  readonly views: number;
  readonly conflicts?: { kind: string; slug: string; version: number; message: string }[];
  readonly restored_version: number;
  readonly from: number;
  readonly to: number;
  readonly unified: string;
  readonly added: number;
  readonly removed: number;
  readonly error: { code: string; message: string; status?: number; hint?: string; details?: Record<string, unknown> };
}

export interface ToolText {
  readonly isError: boolean;
  readonly json: ToolJson;
}

export async function call(connection: Connection, name: string, args: Record<string, unknown>): Promise<ToolText> {
  const result = await connection.client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]?.type).toBe('text');
  return { isError: result.isError === true, json: JSON.parse(content[0]?.text ?? 'null') as ToolJson };
}
