/**
 * The owner's console (docs/console.md; docs/api.md "Console"): sign-in and sign-out, the drop list and the tokens.
 * One drop's page and its actions are console-drop.ts; what every console route shares is console-kit.ts.
 */
import type { FastifyRequest } from 'fastify';
import { listTokens, revokeOwnToken } from '../../domain/accounts.js';
import * as drops from '../../domain/drops.js';
import { exportEntries } from '../../domain/export.js';
import { searchTerms } from '../../domain/search.js';
import type { ListQuery, Metadata } from '../../domain/types.js';
import { ApiError, isApiError } from '../../errors.js';
import { zipStream } from '../../portability/zip-writer.js';
import { acceptFormPosts } from '../forms.js';
import { DEFAULT_SORT, dropListPage, type ListState, SORTS, tokensPage } from '../pages/console.js';
import { METADATA_KEY_PATTERN } from '../schemas.js';
import type { TypedApp } from '../typed-app.js';
import { registerDropPages } from './console-drop.js';
import {
  CONSOLE_FORM_BYTES,
  type ConsoleKit,
  type ConsoleRouteDeps,
  createConsoleKit,
  doneOf,
  logout,
} from './console-kit.js';
import { registerWebhookPages } from './console-webhooks.js';
import { exportFileName } from './portability.js';
import { beginSignIn } from './sign-in.js';

/** Drops per console page. */
const PAGE_SIZE = 25;
const MAX_SEARCH_CHARS = 200;
const MAX_PAGE = 100_000;
const METADATA_KEY_RE = new RegExp(METADATA_KEY_PATTERN);

type Query = Readonly<Record<string, unknown>>;
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** Tag filters from the list's search box: space-separated `key=value` pairs, keys checked as the API checks them. */
export function parseTagFilters(input: string, maxKeyChars: number): Metadata {
  const filters: Record<string, string> = {};
  for (const pair of input.split(/\s+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? '' : pair.slice(0, eq);
    if (!METADATA_KEY_RE.test(key) || key.length > maxKeyChars || key === '__proto__') {
      throw new ApiError('invalid_arg', { message: `"${pair}" is not a tag filter: write key=value.` });
    }
    filters[key] = pair.slice(eq + 1);
  }
  return filters;
}

/** The list's state from its query string; anything unknown falls back to the default. */
function listState(request: FastifyRequest): ListState {
  const query = request.query as Query;
  const sort = Object.hasOwn(SORTS, text(query.sort)) ? text(query.sort) : DEFAULT_SORT;
  const page = Number.parseInt(text(query.page), 10);
  return {
    q: text(query.q).slice(0, MAX_SEARCH_CHARS),
    tags: text(query.tags).slice(0, 1000),
    sort,
    page: Number.isSafeInteger(page) && page > 0 ? Math.min(page, MAX_PAGE) : 1,
  };
}

/**
 * GET /console: the owner's drops, searched over title, description, text and context as `q` of the API searches
 * (docs/api.md, "Search"), filtered by tags, best match first or sorted as the API sorts, paginated.
 */
function listRoute(kit: ConsoleKit, deps: ConsoleRouteDeps) {
  return kit.page(async (v, request, reply) => {
    const state = listState(request);
    const base = { who: v.who, nonce: v.nonce, baseUrl: deps.config.baseUrl, state };
    let metadata: Metadata;
    try {
      metadata = parseTagFilters(state.tags, deps.config.limits.maxMetadataKeyChars);
    } catch (error) {
      if (!isApiError(error)) throw error;
      return kit.refuse(
        reply,
        v,
        error,
        dropListPage({ ...base, drops: [], total: 0, totalPages: 0, error: error.message }),
      );
    }
    const { sortBy, sortOrder } = SORTS[state.sort] ?? { sortBy: 'updated_at', sortOrder: 'desc' };
    const terms = searchTerms(state.q);
    const query: ListQuery = {
      page: state.page,
      pageSize: PAGE_SIZE,
      sortBy,
      sortOrder,
      metadata,
      ...(terms === undefined ? {} : { search: { terms, byRelevance: state.sort === DEFAULT_SORT } }),
    };
    const { items, total } = await drops.listDrops(deps.drops, v.session.accountId, query);
    const totalPages = Math.ceil(total / PAGE_SIZE);
    return kit.show(reply, v, dropListPage({ ...base, drops: items, total, totalPages, ...doneOf(request) }));
  });
}

/** GET /console/tokens and POST /console/tokens/<id>/revoke. */
function registerTokenPages(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps): void {
  const hide = { schema: { hide: true } };
  app.get(
    '/console/tokens',
    hide,
    kit.page(async (v, request, reply) => {
      const tokens = await listTokens(deps.accounts, v.session.accountId);
      const now = deps.accounts.clock.now();
      return kit.show(reply, v, tokensPage({ who: v.who, nonce: v.nonce, tokens, now, ...doneOf(request) }));
    }),
  );
  app.post(
    '/console/tokens/:id/revoke',
    hide,
    kit.action({
      write: false,
      async run(session, request) {
        await revokeOwnToken(deps.accounts, session.accountId, (request.params as { id: string }).id);
        return '/console/tokens?done=revoked';
      },
      async refused(v, _request, message) {
        const tokens = await listTokens(deps.accounts, v.session.accountId);
        return tokensPage({ who: v.who, nonce: v.nonce, tokens, now: deps.accounts.clock.now(), error: message });
      },
    }),
  );
}

/**
 * GET /console/export: "Download everything", the owner's export as one zip (docs/console.md). A GET that changes
 * nothing, like the API's `GET /api/export`: signed out, the sign-in page.
 */
function registerExport(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps): void {
  app.get(
    '/console/export',
    { schema: { hide: true } },
    kit.page(async (v, _request, reply) => {
      const entries = await exportEntries(deps.exports, v.session.accountId);
      return reply
        .header('cache-control', 'no-store')
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${exportFileName(deps.exports.clock.now())}"`)
        .send(zipStream(entries));
    }),
  );
}

export async function consoleRoutes(app: TypedApp, deps: ConsoleRouteDeps): Promise<void> {
  const kit = createConsoleKit(deps);
  const signIn = {
    baseUrl: deps.config.baseUrl,
    identity: deps.identity,
    accounts: deps.accounts,
    sessions: deps.sessions,
  };
  acceptFormPosts(app, { bodyLimit: CONSOLE_FORM_BYTES, refuse: kit.failed });
  app.addHook('onRequest', kit.checkSender);
  app.addHook('onRoute', kit.errorPages);
  const hide = { schema: { hide: true } };
  app.get('/console/login', hide, async (request, reply) =>
    beginSignIn(signIn, request, reply, { console: text((request.query as Query).next) || '/console' }),
  );
  app.post('/console/logout', hide, logout(deps.sessions));
  app.get('/console', hide, listRoute(kit, deps));
  registerDropPages(app, kit, deps);
  registerTokenPages(app, kit, deps);
  registerExport(app, kit, deps);
  registerWebhookPages(app, kit, deps);
}
