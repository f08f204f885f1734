import os from 'node:os';
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

/**
 * Suites whose assertions ride on the service meeting a time bound of its own (the readable copy's 3 s conversion, the
 * screenshot queue's 10 s, the crash tests' writers racing a SIGKILL): they run after the others, one file at a time,
 * with the machine to themselves (docs/contributing.md, "How the tests are organised").
 */
const ALONE = ['markdown', 'previews.browser', 'scale/crash', 'scale/webhook-crash'].map(
  (name) => `packages/server/test/${name}.test.ts`,
);
const EXCLUDE = ['**/node_modules/**', '**/dist/**'];
const POSTGRES = { HTMLDROP_TEST_DB: 'postgres' };

export default defineConfig({
  test: {
    exclude: EXCLUDE,
    pool: 'forks',
    // Two files at a time: vitest's default is one fork fewer than the cores, one on the 2-core machines CI runs on,
    // where the suites mostly wait (on Chromium, child services, PostgreSQL, timers). Each suite owns its database
    // schema, ports and directories. The forks pool runs the ALONE projects' files last, one after another in a single
    // fork, once every other file has finished.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...EXCLUDE, ...ALONE],
        },
      },
      {
        extends: true,
        test: { name: 'postgres', include: HTTP_SUITES.filter((file) => !ALONE.includes(file)), env: POSTGRES },
      },
      {
        extends: true,
        test: { name: 'sqlite-alone', include: ALONE, poolOptions: { forks: { singleFork: true } } },
      },
      {
        extends: true,
        test: {
          name: 'postgres-alone',
          include: ALONE.filter((file) => HTTP_SUITES.includes(file)),
          env: POSTGRES,
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
