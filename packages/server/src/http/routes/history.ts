/** `GET /api/drops/<slug>/diff`: the line diff of two versions, for the drop's owner (docs/api.md, "Version history: diff"). */
import { Type } from '@sinclair/typebox';
import { diffVersions } from '../../domain/diff.js';
import type { DropDeps } from '../../domain/drops.js';
import { callerOf } from '../caller.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';

/** What the history routes use. */
export interface HistoryRouteDeps {
  readonly schemas: Schemas;
  readonly drops: DropDeps;
}

// Plain strings: checked in the domain after the drop, as `/v/<n>` is (docs/api.md 4.3).
const DiffQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'Version to compare from; default: the highest below `to`' })),
  to: Type.Optional(Type.String({ description: "Version to compare to; default: the drop's latest version" })),
});

const VersionDiff = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  unified: Type.String({ description: 'Unified diff of the HTML, 3 lines of context; "" when equal' }),
  added: Type.Integer({ description: 'Lines added' }),
  removed: Type.Integer({ description: 'Lines removed' }),
  exact: Type.Boolean({ description: 'False past the bounds: one hunk from the first to the last changed line' }),
  files: Type.Object(
    {
      added: Type.Array(Type.String(), { description: 'Paths only `to` has' }),
      removed: Type.Array(Type.String(), { description: 'Paths only `from` has' }),
      changed: Type.Array(Type.String(), { description: 'Paths both have, with other bytes' }),
    },
    { description: 'What changed in the files beside the HTML, each list sorted by path' },
  ),
});

export async function historyRoutes(app: TypedApp, { schemas: s, drops }: HistoryRouteDeps): Promise<void> {
  app.get(
    '/api/drops/:slug/diff',
    {
      config: { auth: 'owner' },
      schema: {
        summary: 'Line diff of two versions of the HTML',
        tags: ['versions'],
        params: s.SlugParams,
        querystring: DiffQuery,
        response: { 200: VersionDiff, '4XX': { $ref: 'Error#' } },
      },
    },
    async (request) => {
      const { from, to, unified, added, removed, exact, files } = await diffVersions(
        drops,
        callerOf(request).account.id,
        request.params.slug,
        request.query,
      );
      return { from, to, unified, added, removed, exact, files };
    },
  );
}
