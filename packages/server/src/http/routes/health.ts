/**
 * Liveness and readiness for load balancers and orchestrators (docs/api.md, "Health"):
 * - `GET /healthz`: the process answers (200), whatever its dependencies do;
 * - `GET /readyz`: it can serve correctly now: the database answers a query within 2 s, and the invalidation bus
 *   is subscribed (else a cache could serve changed documents). 200 with each check, or 503 `not_ready` naming the
 *   failing ones. Neither needs a token; both are `no-store`.
 */
import { ApiError } from '../../errors.js';
import type { TypedApp } from '../typed-app.js';

const DATABASE_TIMEOUT_MS = 2000;

export interface HealthDeps {
  /** A cheap query that proves the database answers. */
  readonly checkDatabase: () => Promise<void>;
  /** Whether the invalidation bus is subscribed now (coordination/bus.ts). */
  readonly busSubscribed: () => boolean;
}

type Check = 'ok' | 'down';

async function databaseCheck(deps: HealthDeps): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Check>((resolve) => {
    timer = setTimeout(() => resolve('down'), DATABASE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      deps.checkDatabase().then(
        (): Check => 'ok',
        (): Check => 'down',
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function healthRoutes(app: TypedApp, deps: HealthDeps): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks = { database: await databaseCheck(deps), bus: deps.busSubscribed() ? 'ok' : 'down' } as const;
    const failing = Object.entries(checks)
      .filter(([, state]) => state !== 'ok')
      .map(([name]) => name);
    reply.header('cache-control', 'no-store');
    if (failing.length > 0) {
      throw new ApiError('not_ready', {
        message: `Not ready: ${failing.join(' and ')} down.`,
        details: { checks },
      });
    }
    return { status: 'ready', checks };
  });
}
