/**
 * The owner's comment endpoints (docs/api.md, "Comments"): comment, list (optionally waiting for a new comment, on
 * any instance), across all drops, resolve, delete. Viewers comment from the viewer page (routes/public-comments.ts).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import * as comments from '../../domain/comments.js';
import type { CommentRecord } from '../../domain/types.js';
import { callerOf } from '../caller.js';
import type { Schemas } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';

export interface CommentRouteDeps {
  readonly config: Config;
  readonly schemas: Schemas;
  readonly comments: comments.CommentDeps;
}

const OWNER = { auth: 'owner' } as const;
const WRITE = { auth: 'owner', write: true } as const;
const MAX_WAIT_SECONDS = 60;
const errors = { '4XX': { $ref: 'Error#' } };

/** The Comment shape of docs/api.md; `slug` only in the all-drops listing. */
export function presentComment(comment: CommentRecord, withSlug = false) {
  return {
    id: comment.id,
    ...(withSlug ? { slug: comment.slug } : {}),
    version: comment.version,
    body: comment.body,
    quote: comment.quote,
    author: comment.author,
    created_at: comment.createdAt,
    resolved_at: comment.resolvedAt,
    resolved_in_version: comment.resolvedInVersion,
  };
}

const Comment = Type.Object({
  id: Type.String({ description: 'c_ and 16 base62 characters' }),
  slug: Type.Optional(Type.String({ description: 'Only in GET /api/comments' })),
  version: Type.Integer(),
  body: Type.String(),
  quote: Type.Union([Type.String(), Type.Null()]),
  author: Type.Object({
    name: Type.String(),
    kind: Type.Union([Type.Literal('owner'), Type.Literal('member'), Type.Literal('guest')]),
  }),
  created_at: Type.Integer({ description: 'Strictly increasing per owner: use the last one as the next `since`' }),
  resolved_at: Type.Union([Type.Integer(), Type.Null()]),
  resolved_in_version: Type.Union([Type.Integer(), Type.Null()]),
});

const WaitQuery = Type.Object({
  since: Type.Integer({ minimum: 0, default: 0, description: 'Only comments created after this time (Unix ms)' }),
  wait: Type.Integer({
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    default: 0,
    description: 'Seconds to hold the request when nothing is new, until a comment arrives',
  }),
});

/** An AbortSignal that fires when the client goes away, so a waiting listing stops waiting for nobody. */
function abandonment(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

export async function commentRoutes(app: TypedApp, deps: CommentRouteDeps): Promise<void> {
  registerCommentReads(app, deps);
  registerCommentWrites(app, deps);
}

/** GET /api/drops/<slug>/comments and GET /api/comments: listings, optionally waiting. */
function registerCommentReads(app: TypedApp, deps: CommentRouteDeps): void {
  const s = deps.schemas;

  app.get(
    '/api/drops/:slug/comments',
    {
      config: OWNER,
      schema: {
        summary: 'Comments on your drop created after `since`, oldest first; `wait` holds the request for a new one',
        tags: ['comments'],
        params: s.SlugParams,
        querystring: WaitQuery,
        response: { 200: Type.Object({ data: Type.Array(Comment) }), ...errors },
      },
    },
    async (request, reply) => {
      const { since, wait } = request.query;
      const scope = { slug: request.params.slug };
      const accountId = callerOf(request).account.id;
      const found = await comments.listComments(
        deps.comments,
        accountId,
        scope,
        since,
        wait * 1000,
        abandonment(reply),
      );
      return { data: found.map((comment) => presentComment(comment)) };
    },
  );

  app.get(
    '/api/comments',
    {
      config: OWNER,
      schema: {
        summary: 'Comments on all your drops created after `since` (each with its slug); `wait` as for one drop',
        tags: ['comments'],
        querystring: WaitQuery,
        response: { 200: Type.Object({ data: Type.Array(Comment) }), ...errors },
      },
    },
    async (request, reply) => {
      const { since, wait } = request.query;
      const accountId = callerOf(request).account.id;
      const found = await comments.listComments(
        deps.comments,
        accountId,
        'all',
        since,
        wait * 1000,
        abandonment(reply),
      );
      return { data: found.map((comment) => presentComment(comment, true)) };
    },
  );
}

/** Comment, resolve and delete: the owner's writes. */
function registerCommentWrites(app: TypedApp, deps: CommentRouteDeps): void {
  const s = deps.schemas;
  const CommentParams = Type.Object({ slug: s.SlugParams.properties.slug, id: Type.String({ maxLength: 40 }) });
  app.post(
    '/api/drops/:slug/comments',
    {
      config: WRITE,
      schema: {
        summary: 'Comment on a version of your drop (the latest unless `version` is given)',
        tags: ['comments'],
        params: s.SlugParams,
        body: Type.Object({
          body: Type.String({ description: `1 to ${comments.MAX_COMMENT_CHARS} characters` }),
          version: Type.Optional(Type.Integer({ minimum: 1 })),
          quote: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        }),
        response: { 201: Comment, ...errors },
      },
    },
    async (request, reply) => {
      const { account } = callerOf(request);
      const owner = { accountId: account.id, login: account.login };
      const comment = await comments.addOwnerComment(deps.comments, owner, request.params.slug, request.body);
      return reply.code(201).send(presentComment(comment));
    },
  );

  app.post(
    '/api/drops/:slug/comments/:id/resolve',
    {
      config: WRITE,
      schema: {
        summary: 'Mark a comment resolved (in the drop’s latest version)',
        tags: ['comments'],
        params: CommentParams,
        response: { 200: Comment, ...errors },
      },
    },
    async (request) => {
      const { slug, id } = request.params;
      return presentComment(await comments.resolveComment(deps.comments, callerOf(request).account.id, slug, id));
    },
  );

  app.delete(
    '/api/drops/:slug/comments/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Delete a comment on your drop',
        tags: ['comments'],
        params: CommentParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { slug, id } = request.params;
      await comments.deleteComment(deps.comments, callerOf(request).account.id, slug, id);
      return reply.code(204).send(null);
    },
  );
}
