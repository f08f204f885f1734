import { defineConfig } from 'vitest/config';

/** The HTTP suites that also run against PostgreSQL (each test database in its own schema). */
const HTTP_SUITES = [
  'auth',
  'comments',
  'console',
  'console-network',
  'console-webhooks',
  'console-sharing',
  'content-origin',
  'device',
  'diff',
  'drops',
  'errors',
  'events',
  'forms',
  'files',
  'files-serve',
  'fuzz',
  'history',
  'limits',
  'markdown',
  'mcp-oauth-tokens',
  'mcp-remote',
  'previews',
  'portability',
  'public',
  'visibility',
  'raw-socket',
  'scan',
  'search',
  'stats',
  'webhooks',
].map((name) => `packages/server/test/${name}.test.ts`);

export default defineConfig({
  test: {
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'postgres', include: HTTP_SUITES, env: { HTMLDROP_TEST_DB: 'postgres' } },
      },
    ],
  },
});
