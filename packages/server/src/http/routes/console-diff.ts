/**
 * `GET /console/drops/<slug>/diff?from=<a>&to=<b>` (docs/console.md): two versions of the owner's drop compared,
 * through the domain function the API's diff uses, so the same defaults and refusals apply (docs/api.md, "Version
 * history: diff"). A GET that changes nothing: no CSRF token. A bad or unknown version is a page with the catalogue's
 * status (400, 404); another account's drop is the console's 404 page.
 */
import type { FastifyRequest } from 'fastify';
import { diffVersions } from '../../domain/diff.js';
import * as drops from '../../domain/drops.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { ApiError, isApiError } from '../../errors.js';
import { diffPage } from '../pages/console-diff.js';
import { dropLinks } from '../present.js';
import type { TypedApp } from '../typed-app.js';
import { type ConsoleKit, type ConsoleRouteDeps, refusalText } from './console-kit.js';

const hiddenCodes = new Set(['not_found', 'forbidden']);

/** The versions the owner asked for, to keep them selected on a refusal (unless they are not versions at all). */
function choiceOf(query: Readonly<Record<string, unknown>>) {
  return { from: parseVersionNumber(query.from), to: parseVersionNumber(query.to) };
}

export function registerDiffPage(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps): void {
  const links = dropLinks(deps.config);
  app.get(
    '/console/drops/:slug/diff',
    { schema: { hide: true } },
    kit.page(async (v, request: FastifyRequest, reply) => {
      const { slug } = request.params as { slug: string };
      if (!isValidSlug(slug)) throw new ApiError('not_found');
      const query = request.query as Readonly<Record<string, unknown>>;
      const accountId = v.session.accountId;
      const { drop, versions, files } = await drops.listVersions(deps.drops, accountId, slug);
      const contentUrl = links.contentUrlOf(drop.contentLabel);
      const base = { who: v.who, nonce: v.nonce, drop, versions, contentUrl };
      try {
        const diff = await diffVersions(deps.drops, accountId, slug, { from: query.from, to: query.to });
        const hasFiles = files.has(diff.from) || files.has(diff.to);
        return kit.show(reply, v, diffPage({ ...base, diff, hasFiles }));
      } catch (error) {
        if (!isApiError(error) || hiddenCodes.has(error.code)) throw error;
        return kit.refuse(reply, v, error, diffPage({ ...base, error: refusalText(error), choice: choiceOf(query) }));
      }
    }),
  );
}
