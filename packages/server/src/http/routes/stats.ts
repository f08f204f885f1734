/** `GET /api/drops/<slug>/stats`: read receipts for the drop's owner (docs/api.md 4.3 and "Read receipts"). */
import { getStats, type StatsDeps } from '../../domain/stats.js';
import { callerOf } from '../caller.js';
import { presentStats } from '../present.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';

/** What the stats route uses. */
export interface StatsRouteDeps {
  readonly schemas: Schemas;
  readonly stats: StatsDeps;
}

export async function statsRoutes(app: TypedApp, { schemas: s, stats }: StatsRouteDeps): Promise<void> {
  app.get(
    '/api/drops/:slug/stats',
    {
      config: { auth: 'owner' },
      schema: {
        summary: 'Read receipts: views, distinct daily viewers and times, for the drop and each version',
        tags: ['drops'],
        params: s.SlugParams,
        response: { 200: s.DropStats, '4XX': { $ref: 'Error#' } },
      },
    },
    async (request) => presentStats(await getStats(stats, callerOf(request).account.id, request.params.slug)),
  );
}
