/**
 * The legacy /api/prototypes shapes (spec 4.7; docs/api.md 4.7): a bare array on list, `password` for the
 * passcode, PUT with everything optional, DELETE answering 200. Same domain actions as /api/drops.
 */
import { Type } from '@sinclair/typebox';
import * as drops from '../../domain/drops.js';
import type { DropRecord } from '../../domain/types.js';
import { callerOf } from '../caller.js';
import { dropLinks, presentDrop } from '../present.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';
import { refuseField, wrongField } from '../validation.js';
import type { DropRouteDeps } from './drops.js';
import { registerPasscodeRoute } from './passcode-route.js';

const OWNER = { auth: 'owner' } as const;
const WRITE = { auth: 'owner', write: true } as const;

/** What the legacy routes share. */
interface LegacyRouteKit {
  readonly deps: DropRouteDeps;
  readonly s: Schemas;
  readonly errors: { readonly '4XX': { readonly $ref: string } };
  dropResponse(status: number): Record<string, unknown>;
  present(drop: DropRecord): ReturnType<typeof presentDrop>;
  readonly tags: string[];
}

export async function prototypeRoutes(app: TypedApp, deps: DropRouteDeps): Promise<void> {
  const { schemas: s, config } = deps;
  const errors = { '4XX': { $ref: 'Error#' } };
  const links = dropLinks(config);
  const kit: LegacyRouteKit = {
    deps,
    s,
    errors,
    dropResponse: (status) => ({ [status]: { $ref: 'Drop#' }, ...errors }),
    present: (drop) => presentDrop(drop, links),
    tags: ['legacy prototypes'],
  };
  registerLegacyCollection(app, kit);
  registerLegacyItem(app, kit);
  registerPasscodeRoute(app, deps, {
    url: '/api/prototypes/:slug/password',
    field: 'password',
    body: s.LegacyPasswordBody,
    summary: 'Legacy: set, change or remove ("") the password',
    tags: kit.tags,
  });
}

/** Legacy `GET /api/prototypes` (a bare array) and `POST /api/prototypes` (spec 4.7). */
function registerLegacyCollection(app: TypedApp, kit: LegacyRouteKit): void {
  const { deps, s, errors, dropResponse, present, tags } = kit;
  app.get(
    '/api/prototypes',
    {
      config: OWNER,
      schema: {
        summary: "Legacy: all of the caller's drops, newest first, as a bare array",
        tags,
        response: { 200: Type.Array(Type.Ref(s.Drop)), ...errors },
      },
    },
    async (request) => {
      const { items } = await drops.listDrops(deps.drops, callerOf(request).account.id, {
        page: 1,
        pageSize: deps.config.limits.maxDropsPerAccount,
        sortBy: 'created_at',
        sortOrder: 'desc',
        metadata: {},
      });
      return items.map(present);
    },
  );

  app.post(
    '/api/prototypes',
    {
      config: WRITE,
      bodyLimit: deps.config.limits.maxBodyBytes,
      preValidation: refuseField('passcode', wrongField('passcode', 'the legacy API calls it password')),
      schema: { summary: 'Legacy: create a drop', tags, body: s.LegacyCreateBody, response: dropResponse(201) },
    },
    async (request, reply) => {
      // Only the fields the schema validated reach the domain (unknown fields are ignored, docs/api.md 4.3).
      const { title, description, html, password, context, metadata } = request.body;
      const drop = await drops.createDrop(deps.drops, callerOf(request).account.id, {
        title,
        html,
        passcode: password,
        ...(description === undefined ? {} : { description }),
        ...(context === undefined ? {} : { context }),
        ...(metadata === undefined ? {} : { metadata }),
      });
      return reply.code(201).send(present(drop));
    },
  );
}

/** Legacy `GET`, `PUT` (everything optional) and `DELETE /api/prototypes/<slug>` (spec 4.7). */
function registerLegacyItem(app: TypedApp, kit: LegacyRouteKit): void {
  const { deps, s, errors, dropResponse, present, tags } = kit;
  app.get(
    '/api/prototypes/:slug',
    {
      config: OWNER,
      schema: { summary: 'Legacy: get one drop', tags, params: s.SlugParams, response: dropResponse(200) },
    },
    async (request) => present(await drops.getOwnedDrop(deps.drops, callerOf(request).account.id, request.params.slug)),
  );

  app.put(
    '/api/prototypes/:slug',
    {
      config: WRITE,
      bodyLimit: deps.config.limits.maxBodyBytes,
      schema: {
        summary: 'Legacy: update; html (optional) creates a new version',
        tags,
        params: s.SlugParams,
        body: s.LegacyPutBody,
        response: dropResponse(200),
      },
    },
    async (request) => {
      const accountId = callerOf(request).account.id;
      const { html, title, description, context, metadata } = request.body;
      const details = {
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
        ...(metadata === undefined ? {} : { metadata }),
      };
      const drop =
        html === undefined
          ? await drops.updateDetails(deps.drops, accountId, request.params.slug, details)
          : await drops.addVersion(deps.drops, accountId, request.params.slug, {
              ...details,
              html,
              ...(context === undefined ? {} : { context }),
            });
      return present(drop);
    },
  );

  app.delete(
    '/api/prototypes/:slug',
    {
      config: WRITE,
      schema: {
        summary: 'Legacy: delete a drop',
        tags,
        params: s.SlugParams,
        response: { 200: Type.Object({ deleted: Type.Literal(true), slug: Type.String() }), ...errors },
      },
    },
    async (request) => {
      await drops.deleteDrop(deps.drops, callerOf(request).account.id, request.params.slug);
      return { deleted: true as const, slug: request.params.slug };
    },
  );
}
