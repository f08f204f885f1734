/**
 * Discovery for agents (/api/onboard, /llms.txt, /.well-known/agent-card.json, /openapi.json) and the service's
 * own small browser files (/, /favicon.ico, /robots.txt).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { builtFile } from '../../built-files.js';
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import { wantsJson } from '../accept.js';
import { servicePage, showPage } from '../page-reply.js';
import { faviconIco } from '../pages/favicon.js';
import { landingPage } from '../pages/landing.js';
import { agentCard, llmsTxt, onboardMarkdown } from '../pages/onboard.js';
import type { TypedApp } from '../typed-app.js';

/**
 * robots.txt: drops are shared by link, not published for search engines (a drop's URL found by a crawler would be
 * indexed otherwise). Only the landing page and the agents' discovery text may be crawled.
 */
const ROBOTS_TXT = `# htmldrop: drops are shared by link and are not meant for search engines.
User-agent: *
Allow: /$
Allow: /llms.txt
Disallow: /
`;

/**
 * A package tarball that `npm run build` writes into dist/assets (the packed CLI, the bundled MCP server), found by
 * file name pattern; undefined when not built.
 */
function loadAsset(pattern: RegExp): Buffer | undefined {
  const dir = fileURLToPath(builtFile('assets/'));
  const file = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => pattern.test(f)) : undefined;
  return file === undefined ? undefined : fs.readFileSync(path.join(dir, file));
}

export async function discoveryRoutes(app: TypedApp, { config }: { readonly config: Config }): Promise<void> {
  const markdown = onboardMarkdown(config);
  const llms = llmsTxt(config);
  const card = JSON.stringify(agentCard(config));

  app.get(
    '/api/onboard',
    {
      schema: {
        summary: 'The agent protocol: Markdown by default, JSON with Accept: application/json',
        tags: ['discovery'],
        response: { 200: Type.Object({ instructions: Type.String(), public_url: Type.String() }) },
      },
    },
    async (request, reply) => {
      reply.header('vary', 'Accept').header('cache-control', 'public, max-age=300');
      if (wantsJson(request.headers.accept)) return { instructions: markdown, public_url: config.baseUrl };
      return reply
        .type('text/markdown; charset=utf-8')
        .serializer(String)
        .send(markdown as never);
    },
  );

  app.get('/llms.txt', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=300').send(llms),
  );

  app.get('/.well-known/agent-card.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(card),
  );

  // The CLI and the MCP server, handed out by the service itself: `npx --yes --package=<url> <bin>` needs no registry.
  for (const { url, pattern, what } of [
    { url: '/cli/htmldrop.tgz', pattern: /^htmldrop-client-.*\.tgz$/, what: 'CLI' },
    { url: '/mcp/htmldrop-mcp.tgz', pattern: /^htmldrop-mcp-.*\.tgz$/, what: 'MCP server' },
  ]) {
    const tarball = loadAsset(pattern);
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      if (tarball === undefined)
        throw new ApiError('not_found', { message: `The ${what} package was not built on this server.` });
      return reply.type('application/gzip').header('cache-control', 'public, max-age=300').send(tarball);
    });
  }

  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(app.swagger()),
  );

  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    return showPage(reply, landingPage(config.baseUrl, nonce), servicePage(nonce));
  });

  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(faviconIco()),
  );

  app.get('/robots.txt', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=86400').send(ROBOTS_TXT),
  );
}
