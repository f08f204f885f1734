/**
 * Who can see a drop, for its owner (docs/api.md, "Who can see a drop"): recipient links (create, list, revoke) and
 * the access log. The decision itself is domain/public-view.ts; these routes only manage what it reads.
 */
import { Type } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import { type AccessLogDeps, readAccess } from '../../domain/access-log.js';
import { createLink, LINK_PARAM, listLinks, type RecipientLinkDeps, revokeLink } from '../../domain/recipient-links.js';
import { callerOf } from '../caller.js';
import { presentAccess, presentLink } from '../present.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';

export interface AccessRouteDeps {
  readonly config: Config;
  readonly schemas: Schemas;
  readonly links: RecipientLinkDeps;
  readonly accessLog: AccessLogDeps;
}

const OWNER = { auth: 'owner' } as const;
const WRITE = { auth: 'owner', write: true } as const;

const Millis = (description: string) => Type.Integer({ description: `${description} (Unix ms)` });
const MillisOrNull = (description: string) => Type.Union([Millis(description), Type.Null()]);

const Link = Type.Object(
  {
    id: Type.String({ description: 'l_<base62>' }),
    label: Type.String({ description: 'Who the link is for' }),
    created_at: Millis('Creation time'),
    expires_at: MillisOrNull('When it stops opening the drop; null: never'),
    revoked_at: MillisOrNull('When the owner revoked it; null: not revoked'),
    views: Type.Integer({ description: 'Viewer renders it opened' }),
    last_viewed_at: MillisOrNull('Its latest view; null: never opened'),
  },
  { additionalProperties: false },
);

const AccessEntry = Type.Object(
  {
    at: Millis('When'),
    outcome: Type.Union([Type.Literal('viewed'), Type.Literal('refused')]),
    reason: Type.Union([
      Type.Null(),
      Type.Literal('sign_in_required'),
      Type.Literal('not_on_list'),
      Type.Literal('wrong_passcode'),
      Type.Literal('link_revoked'),
      Type.Literal('link_expired'),
    ]),
    who: Type.Object({
      kind: Type.Union([
        Type.Literal('owner'),
        Type.Literal('person'),
        Type.Literal('link'),
        Type.Literal('anonymous'),
      ]),
      name: Type.Union([Type.String(), Type.Null()], {
        description: "A person's provider username, a link's label; null for anonymous",
      }),
    }),
    version: Type.Union([Type.Integer(), Type.Null()], { description: 'The version asked for; null: the latest' }),
  },
  { additionalProperties: false },
);

export async function accessRoutes(app: TypedApp, deps: AccessRouteDeps): Promise<void> {
  const { schemas: s } = deps;
  const errors = { '4XX': { $ref: 'Error#' } } as const;
  const LinkParams = Type.Object({
    slug: s.SlugParams.properties.slug,
    // Any short id: an unknown one is 404 after the drop's ownership is checked (403 for another's drop).
    id: Type.String({ maxLength: 60, description: 'l_<base62>' }),
  });

  app.post(
    '/api/drops/:slug/links',
    {
      config: WRITE,
      schema: {
        summary: 'Create a recipient link: it opens the drop whatever its visibility and passcode',
        tags: ['sharing'],
        params: s.SlugParams,
        body: Type.Object({
          label: Type.String({ minLength: 1, maxLength: 100, description: 'Who the link is for, e.g. Dana' }),
          expires_at: Type.Optional(
            Type.Union([Type.Integer(), Type.Null()], { description: 'Unix ms, at least now + 60 s; absent: never' }),
          ),
        }),
        response: {
          201: Type.Composite([
            Type.Object({ url: Type.String({ description: '{base_url}/p/<slug>?k=<secret>: this answer only' }) }),
            Link,
          ]),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      const { link, secret } = await createLink(deps.links, callerOf(request).account.id, slug, request.body);
      const url = `${deps.config.baseUrl}/p/${slug}?${LINK_PARAM}=${secret}`;
      return reply.code(201).send({ ...presentLink(link), url });
    },
  );

  app.get(
    '/api/drops/:slug/links',
    {
      config: OWNER,
      schema: {
        summary: "The drop's recipient links, newest first (never their secrets)",
        tags: ['sharing'],
        params: s.SlugParams,
        response: { 200: Type.Object({ data: Type.Array(Link) }), ...errors },
      },
    },
    async (request) => ({
      data: (await listLinks(deps.links, callerOf(request).account.id, request.params.slug)).map(presentLink),
    }),
  );

  app.delete(
    '/api/drops/:slug/links/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Revoke a recipient link: it stops opening the drop at once, on every instance',
        tags: ['sharing'],
        params: LinkParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { slug, id } = request.params;
      await revokeLink(deps.links, callerOf(request).account.id, slug, id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/drops/:slug/access',
    {
      config: OWNER,
      schema: {
        summary: 'The access log: views and refusals with the reason and who, newest first, kept 90 days',
        tags: ['sharing'],
        params: s.SlugParams,
        querystring: Type.Object({
          since: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix ms: entries at or after it' })),
        }),
        response: { 200: Type.Object({ data: Type.Array(AccessEntry) }), ...errors },
      },
    },
    async (request) => {
      const { slug } = request.params;
      const entries = await readAccess(deps.accessLog, callerOf(request).account.id, slug, request.query.since ?? 0);
      return { data: entries.map(presentAccess) };
    },
  );
}
