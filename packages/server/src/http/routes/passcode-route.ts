/**
 * The passcode endpoint, in its two spellings: `POST /api/drops/<slug>/passcode {passcode}` and the legacy
 * `POST /api/prototypes/<slug>/password {password}` (spec 4.7; docs/api.md 4.3 and 4.7). One handler: set, change
 * or remove ("") the drop's passcode, answering the Drop.
 */
import type { TSchema } from '@sinclair/typebox';
import * as drops from '../../domain/drops.js';
import { callerOf } from '../caller.js';
import { withEtag } from '../preconditions.js';
import { dropLinks, presentDrop } from '../present.js';
import type { TypedApp } from '../typed-app.js';
import type { DropRouteDeps } from './drops.js';

export interface PasscodeRouteOptions {
  readonly url: string;
  /** The body field that carries the passcode. */
  readonly field: 'passcode' | 'password';
  readonly body: TSchema;
  readonly summary: string;
  readonly tags: string[];
}

export function registerPasscodeRoute(app: TypedApp, deps: DropRouteDeps, options: PasscodeRouteOptions): void {
  const links = dropLinks(deps.config);
  app.post(
    options.url,
    {
      config: { auth: 'owner', write: true },
      schema: {
        summary: options.summary,
        tags: options.tags,
        params: deps.schemas.SlugParams,
        body: options.body,
        response: { 200: { $ref: 'Drop#' }, '4XX': { $ref: 'Error#' } },
      },
    },
    async (request, reply) => {
      const { slug } = request.params as { slug: string };
      // The schema made the field a string.
      const passcode = (request.body as Record<string, string>)[options.field] ?? '';
      const drop = await drops.setPasscode(deps.drops, callerOf(request).account.id, slug, passcode);
      return presentDrop(withEtag(reply, drop), links);
    },
  );
}
