/** /api/drops: the owner API for drops and versions (spec 4.3, 3.2). */
import { Type } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import type { CommentDeps } from '../../domain/comments.js';
import * as comments from '../../domain/comments.js';
import type { DropDeps } from '../../domain/drops.js';
import * as drops from '../../domain/drops.js';
import { searchTerms } from '../../domain/search.js';
import type { ListQuery, Metadata } from '../../domain/types.js';
import { ApiError } from '../../errors.js';
import { callerOf } from '../caller.js';
import { documentBodyLimit } from '../json-body.js';
import { ifLatestOf, withEtag } from '../preconditions.js';
import { dropLinks, presentDrop, presentVersion, presentVersionItem } from '../present.js';
import type { Schemas } from '../schemas.js';
import { IdempotencyHeaders, IfMatchHeaders, METADATA_KEY_PATTERN } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';
import { refuseField, wrongField } from '../validation.js';
import { registerPasscodeRoute } from './passcode-route.js';

const OWNER = { auth: 'owner' } as const;
const WRITE = { auth: 'owner', write: true } as const;
const METADATA_PREFIX = 'metadata.';
const METADATA_KEY_RE = new RegExp(METADATA_KEY_PATTERN);

/** Equality filters from `metadata.<key>=<value>` query pairs; a bad key is 400 invalid_arg naming it. */
function metadataFilters(query: Record<string, unknown>, maxKeyChars: number): Metadata {
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!name.startsWith(METADATA_PREFIX)) continue;
    const key = name.slice(METADATA_PREFIX.length);
    if (!METADATA_KEY_RE.test(key) || key.length > maxKeyChars || typeof value !== 'string') {
      throw new ApiError('invalid_arg', {
        message: `Query parameter "${name}" is not a valid metadata filter (one value per key; key of [A-Za-z0-9_.-]).`,
        details: { field: name, key },
      });
    }
    filters[key] = value;
  }
  return filters;
}

/** The `<n>` of `/v/<n>` (400 invalid_arg naming `n` when it is not a version number). */
const versionNumber = (raw: string): number => drops.versionNumberArg('n', raw);

/** What the /api/drops routes share: schemas, the response shapes, the presenter. */
interface DropRouteKit {
  readonly deps: DropRouteDeps;
  readonly s: Schemas;
  readonly errors: { readonly '4XX': { readonly $ref: string } };
  dropResponse(status: number): Record<string, unknown>;
  present(drop: Parameters<typeof presentDrop>[0]): ReturnType<typeof presentDrop>;
  /** The routes that carry a document take bodies up to the transport cap; every other body is small (docs/api.md 8). */
  readonly documentBody: number;
}

/** What the owner's drop routes use (also the legacy routes, prototypes.ts). */
export interface DropRouteDeps {
  readonly config: Config;
  readonly schemas: Schemas;
  readonly drops: DropDeps;
  readonly comments: CommentDeps;
}

export async function dropRoutes(app: TypedApp, deps: DropRouteDeps): Promise<void> {
  const { schemas: s, config } = deps;
  const errors = { '4XX': { $ref: 'Error#' } };
  const links = dropLinks(config);
  const kit: DropRouteKit = {
    deps,
    s,
    errors,
    dropResponse: (status) => ({ [status]: { $ref: 'Drop#' }, ...errors }),
    present: (drop) => presentDrop(drop, links),
    documentBody: documentBodyLimit(config.limits),
  };
  registerDropCollection(app, kit);
  registerDropItem(app, kit);
  registerDropPut(app, kit);
  registerVersionRoutes(app, kit);
  registerRestoreRoute(app, kit);
  registerPasscodeRoute(app, deps, {
    url: '/api/drops/:slug/passcode',
    field: 'passcode',
    body: s.PasscodeBody,
    summary: 'Set, change or remove ("") the passcode',
    tags: ['drops'],
  });
}

/** `POST /api/drops` and `GET /api/drops` (spec 4.3). */
function registerDropCollection(app: TypedApp, kit: DropRouteKit): void {
  const { deps, s, errors, dropResponse, present, documentBody } = kit;
  app.post(
    '/api/drops',
    {
      config: { ...WRITE, idempotent: true },
      bodyLimit: documentBody,
      preValidation: refuseField('password', wrongField('password', 'use passcode')),
      schema: {
        summary: 'Create a drop (version 1)',
        tags: ['drops'],
        headers: IdempotencyHeaders,
        body: s.CreateDropBody,
        response: dropResponse(201),
      },
    },
    async (request, reply) => {
      const drop = await drops.createDrop(deps.drops, callerOf(request).account.id, request.body);
      return reply.code(201).send(present(withEtag(reply, drop)));
    },
  );

  app.get(
    '/api/drops',
    {
      config: OWNER,
      // The answer is built field by field (presentDrop, the pagination below), so V8's own JSON.stringify writes
      // it as the schema would: a list of 25 drops in 36 µs and 29 KB of garbage, against 49 µs and 65 KB through
      // fast-json-stringify, whose collections set the p99 of the busiest owner endpoint (decision 0043). The
      // schema still documents the answer (OpenAPI) and the tests check answers against it. Handed to Fastify as
      // bytes (it sends a Buffer as it is; its types say string): a string answer was measured and copied once more
      // (11 KB each, 10 KB less garbage a request, docs/decisions/0044-rows-built-in-javascript.md).
      serializerCompiler: () => (data) => Buffer.from(JSON.stringify(data)) as unknown as string,
      schema: {
        summary: "List the caller's drops",
        tags: ['drops'],
        querystring: s.ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref(s.Drop)), pagination: s.Pagination }),
          ...errors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const filters = metadataFilters(request.query as Record<string, unknown>, deps.config.limits.maxMetadataKeyChars);
      const terms = searchTerms(q.q);
      const byRelevance = terms !== undefined && q.sortBy === undefined;
      const query: ListQuery = {
        page: q.page,
        pageSize: q.pageSize,
        sortBy: q.sortBy ?? 'created_at',
        sortOrder: q.sortOrder,
        metadata: filters,
        ...(terms === undefined ? {} : { search: { terms, byRelevance } }),
      };
      const { items, total } = await drops.listDrops(deps.drops, callerOf(request).account.id, query);
      return {
        data: items.map(present),
        pagination: {
          page: query.page,
          page_size: query.pageSize,
          total_items: total,
          total_pages: Math.ceil(total / query.pageSize),
          sort_by: byRelevance ? 'relevance' : query.sortBy,
          sort_order: byRelevance ? 'desc' : query.sortOrder,
        },
      };
    },
  );
}

/** `GET`, `PATCH` and `DELETE /api/drops/<slug>` (spec 4.3), with ETag and If-Match (docs/api.md, "History"). */
function registerDropItem(app: TypedApp, kit: DropRouteKit): void {
  const { deps, s, errors, dropResponse, present } = kit;
  app.get(
    '/api/drops/:slug',
    {
      config: OWNER,
      schema: { summary: 'Get one drop', tags: ['drops'], params: s.SlugParams, response: dropResponse(200) },
    },
    async (request, reply) => {
      const drop = await drops.getOwnedDrop(deps.drops, callerOf(request).account.id, request.params.slug);
      return present(withEtag(reply, drop));
    },
  );

  app.patch(
    '/api/drops/:slug',
    {
      config: WRITE,
      // spec 4.3: html on PATCH is its own error, whatever else the body holds.
      preValidation: [
        refuseField('html', () => new ApiError('metadata_only_on_patch')),
        refuseField('passcode', wrongField('passcode', 'set it with POST /api/drops/<slug>/passcode')),
      ],
      schema: {
        summary: 'Change title, description, metadata, comments or expiry (no new version)',
        tags: ['drops'],
        params: s.SlugParams,
        headers: IfMatchHeaders,
        body: s.PatchDropBody,
        response: dropResponse(200),
      },
    },
    async (request, reply) => {
      const accountId = callerOf(request).account.id;
      const drop = await drops.updateDetails(
        deps.drops,
        accountId,
        request.params.slug,
        request.body,
        ifLatestOf(request),
      );
      return present(withEtag(reply, drop));
    },
  );

  app.delete(
    '/api/drops/:slug',
    {
      config: WRITE,
      schema: {
        summary: 'Delete a drop and all its versions',
        tags: ['drops'],
        params: s.SlugParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const accountId = callerOf(request).account.id;
      await drops.deleteDrop(deps.drops, accountId, request.params.slug, ifLatestOf(request));
      return reply.code(204).send(null);
    },
  );
}

/** `PUT /api/drops/<slug>`: a new version (spec 4.3), with If-Match and Idempotency-Key (docs/api.md, "History"). */
function registerDropPut(app: TypedApp, kit: DropRouteKit): void {
  const { deps, s, dropResponse, present, documentBody } = kit;
  app.put(
    '/api/drops/:slug',
    {
      config: { ...WRITE, idempotent: true },
      bodyLimit: documentBody,
      preValidation: [
        refuseField('passcode', wrongField('passcode', 'set it with POST /api/drops/<slug>/passcode')),
        refuseField('expires_at', wrongField('expires_at', 'set it with PATCH /api/drops/<slug>')),
        refuseField('network', wrongField('network', 'set it with PATCH /api/drops/<slug>')),
      ],
      schema: {
        summary: 'Upload new HTML: always creates a new version',
        tags: ['drops'],
        params: s.SlugParams,
        headers: Type.Composite([IfMatchHeaders, IdempotencyHeaders]),
        body: s.PutDropBody,
        response: dropResponse(200),
      },
    },
    async (request, reply) => {
      const accountId = callerOf(request).account.id;
      const { slug } = request.params;
      const { resolves, ...input } = request.body;
      const ifLatest = ifLatestOf(request);
      if (resolves !== undefined) {
        await drops.getOwnedDrop(deps.drops, accountId, slug);
        await comments.checkResolvable(deps.comments, slug, resolves);
      }
      const drop = await drops.addVersion(deps.drops, accountId, slug, input, ifLatest);
      if (resolves !== undefined) await comments.resolveInVersion(deps.comments, slug, resolves, drop.latestVersion);
      return present(withEtag(reply, drop));
    },
  );
}

/** The versions of a drop: list, one version, delete one (spec 4.3, 3.2). */
function registerVersionRoutes(app: TypedApp, kit: DropRouteKit): void {
  const { deps, s, errors, dropResponse, present } = kit;
  app.get(
    '/api/drops/:slug/versions',
    {
      config: OWNER,
      schema: {
        summary: 'List versions, newest first',
        tags: ['versions'],
        params: s.SlugParams,
        response: { 200: Type.Array(s.VersionListItem), ...errors },
      },
    },
    async (request) => {
      const { drop, versions, files } = await drops.listVersions(
        deps.drops,
        callerOf(request).account.id,
        request.params.slug,
      );
      return versions.map((v) => presentVersionItem(v, drop.latestVersion, files.get(v.version)));
    },
  );

  app.get(
    '/api/drops/:slug/v/:n',
    {
      config: OWNER,
      schema: {
        summary: 'Get one version record',
        tags: ['versions'],
        params: s.VersionParams,
        response: { 200: s.Version, ...errors },
      },
    },
    async (request) => {
      const { slug, n } = request.params;
      const accountId = callerOf(request).account.id;
      await drops.getOwnedDrop(deps.drops, accountId, slug);
      const { drop, version, files } = await drops.getVersion(deps.drops, accountId, slug, versionNumber(n));
      return presentVersion(version, drop.latestVersion, files);
    },
  );

  app.delete(
    '/api/drops/:slug/v/:n',
    {
      config: WRITE,
      schema: {
        summary: 'Delete one version (not the only one)',
        tags: ['versions'],
        params: s.VersionParams,
        response: dropResponse(200),
      },
    },
    async (request, reply) => {
      const { slug, n } = request.params;
      const accountId = callerOf(request).account.id;
      await drops.getOwnedDrop(deps.drops, accountId, slug);
      return present(withEtag(reply, await drops.deleteVersion(deps.drops, accountId, slug, versionNumber(n))));
    },
  );
}

/** `POST /api/drops/<slug>/v/<n>/restore`: version n's html and context as a new version (docs/api.md, "History"). */
function registerRestoreRoute(app: TypedApp, kit: DropRouteKit): void {
  const { deps, s, dropResponse, present } = kit;
  app.post(
    '/api/drops/:slug/v/:n/restore',
    {
      config: WRITE,
      schema: {
        summary: "Restore a version: a new version with that version's html and context",
        tags: ['versions'],
        params: s.VersionParams,
        headers: IfMatchHeaders,
        response: dropResponse(200),
      },
    },
    async (request, reply) => {
      const { slug, n } = request.params;
      const accountId = callerOf(request).account.id;
      const ifLatest = ifLatestOf(request);
      await drops.getOwnedDrop(deps.drops, accountId, slug);
      const drop = await drops.restoreVersion(deps.drops, accountId, slug, versionNumber(n), ifLatest);
      return present(withEtag(reply, drop));
    },
  );
}
