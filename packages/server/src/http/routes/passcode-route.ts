/**
 * The passcode endpoint, in its two spellings: `POST /api/drops/<slug>/passcode {passcode}` and the legacy
 * `POST /api/prototypes/<slug>/password {password}` (spec 4.7; docs/api.md 4.3 and 4.7). One handler: set, change
 * or remove ("") the drop's passcode, answering the Drop.
 */
import type { TSchema } from '@sinclair/typebox';
import * as drops from '../../domain/drops.js';
import type { RouteContext, TypedApp } from '../app.js';
import { presentDrop } from '../present.js';

export interface PasscodeRouteOptions {
  readonly url: string;
  /** The body field that carries the passcode. */
  readonly field: 'passcode' | 'password';
  readonly body: TSchema;
  readonly summary: string;
  readonly tags: string[];
}

export function registerPasscodeRoute(app: TypedApp, ctx: RouteContext, options: PasscodeRouteOptions): void {
  app.post(
    options.url,
    {
      config: { auth: 'owner', write: true },
      schema: {
        summary: options.summary,
        tags: options.tags,
        params: ctx.schemas.SlugParams,
        body: options.body,
        response: { 200: { $ref: 'Drop#' }, '4XX': { $ref: 'Error#' } },
      },
    },
    async (request) => {
      const { slug } = request.params as { slug: string };
      // The schema made the field a string.
      const passcode = (request.body as Record<string, string>)[options.field] ?? '';
      const drop = await drops.setPasscode(ctx.drops, ctx.callerOf(request).account.id, slug, passcode);
      return presentDrop(drop, ctx.config.baseUrl);
    },
  );
}
