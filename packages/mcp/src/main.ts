#!/usr/bin/env node
/**
 * htmldrop-mcp: the htmldrop MCP server over stdio. stdout carries the protocol and nothing else; diagnostics go to
 * stderr. Configuration: HTMLDROP_SERVER (or --server), and the token from --token, ./.htmldrop/token,
 * HTMLDROP_TOKEN or ~/.config/htmldrop/token (in that order: docs/api.md, "Client token lookup"), resolved on every
 * tool call.
 */
import { parseArgs } from 'node:util';
import { CLIENT_VERSION, DEFAULT_SERVER, HtmlDropError, normalizeServer } from '@htmldrop/client';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createToolContext } from './tools/context.js';
import { createMcpServer } from './tools.js';

const USAGE = `Usage: htmldrop-mcp [--server <url>] [--token <token>]

The htmldrop MCP server (stdio). Tools: publish, update, list, get, delete, diff, restore, get_feedback,
resolve_comment, get_stats.
  --server <url>    the service (default $HTMLDROP_SERVER, else ${DEFAULT_SERVER})
  --token <token>   token to use (else ./.htmldrop/token, $HTMLDROP_TOKEN, ~/.config/htmldrop/token)
Sign in once with \`htmldrop login\`; the token file it writes is read on every tool call.`;

function fail(message: string): never {
  process.stderr.write(`htmldrop-mcp: ${message}\n`);
  process.exit(2);
}

async function start(): Promise<void> {
  let values: {
    server?: string | undefined;
    token?: string | undefined;
    help?: boolean | undefined;
    version?: boolean | undefined;
  };
  try {
    values = parseArgs({
      options: {
        server: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    fail(`${error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)}\n${USAGE}`);
  }
  // No protocol session in these two modes: stdout is free.
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.version === true) {
    process.stdout.write(`${CLIENT_VERSION}\n`);
    return;
  }
  let server: string;
  try {
    server = normalizeServer(values.server ?? (process.env.HTMLDROP_SERVER?.trim() || DEFAULT_SERVER));
  } catch (error) {
    fail(error instanceof HtmlDropError ? error.message : String(error));
  }
  const mcp = createMcpServer(createToolContext({ server, token: values.token }));
  await mcp.connect(new StdioServerTransport());
  process.stderr.write(`htmldrop-mcp ${CLIENT_VERSION}: serving ${server} on stdio\n`);
}

start().catch((error: unknown) => {
  process.stderr.write(`htmldrop-mcp: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
