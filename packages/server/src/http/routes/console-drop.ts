/**
 * One drop in the console (docs/console.md): its page, the confirmation before deleting it, and every action an owner
 * has in the API (details, passcode, restore or delete a version, delete the drop), each through the domain function
 * the API uses and the same body validation.
 */
import type { FastifyRequest } from 'fastify';
import { readAccess } from '../../domain/access-log.js';
import * as comments from '../../domain/comments.js';
import * as drops from '../../domain/drops.js';
import { isValidSlug, parseVersionNumber } from '../../domain/ids.js';
import { createLink, LINK_PARAM, revokeLink } from '../../domain/recipient-links.js';
import { getStats } from '../../domain/stats.js';
import type { Metadata } from '../../domain/types.js';
import { ApiError, isApiError } from '../../errors.js';
import { formField } from '../forms.js';
import { refusePage } from '../page-reply.js';
import { confirmDeletePage, dropPage, EXPIRY_CHOICES } from '../pages/console-drop.js';
import { NOT_FOUND_PAGE, simplePage } from '../pages/layout.js';
import { dropLinks } from '../present.js';
import type { TypedApp } from '../typed-app.js';
import { bodyChecker } from '../validation.js';
import { type SessionPayload, WEB_SESSION } from '../web-session.js';
import { registerDiffPage } from './console-diff.js';
import { type ConsoleKit, type ConsoleRouteDeps, doneOf, refusalText, type Visit } from './console-kit.js';
import { sendImage } from './previews.js';
import { commentsBefore } from './public-comments.js';

type Params = { readonly slug: string; readonly n?: string; readonly id?: string };

const paramsOf = (request: FastifyRequest) => request.params as Params;
const pagePath = (slug: string) => `/console/drops/${encodeURIComponent(slug)}`;

/** Tags from the details form, one `key=value` per line; the schema then checks keys and values as the API does. */
export function parseTags(input: string): Metadata {
  const tags: Record<string, string> = {};
  for (const [index, line] of input.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue;
    const eq = line.indexOf('=');
    const key = eq < 0 ? '' : line.slice(0, eq).trim();
    if (key === '' || key === '__proto__' || Object.hasOwn(tags, key)) {
      const why = key === '' ? 'is not key=value' : `repeats a key or uses a reserved one ("${key}")`;
      throw new ApiError('invalid_arg', { message: `Tag line ${index + 1} ${why}.`, details: { field: 'metadata' } });
    }
    tags[key] = line.slice(eq + 1).trim();
  }
  return tags;
}

/**
 * The network control of the details form (docs/api.md, "Each drop on its own origin"): `open` or `none`, or `list`
 * with the origins one per line; absent (a form without the control) leaves the policy as it is. The origins go to
 * the domain as typed, which refuses anything that is not an origin with the API's message.
 */
export function parseNetwork(mode: string, origins: string): unknown {
  if (mode === '') return undefined;
  if (mode === 'open' || mode === 'none') return mode;
  const list = origins.split(/\s+/).filter((line) => line !== '');
  if (mode !== 'list' || list.length === 0) {
    const message =
      mode === 'list'
        ? 'Write at least one origin (one per line), or choose "Nothing from the network".'
        : 'Choose what the drop may load from the list.';
    throw new ApiError('invalid_arg', { message, details: { field: 'network' } });
  }
  return list;
}

/** The `<n>` of a version action: a version number, else 404 like an unknown version. */
function versionOf(request: FastifyRequest): number {
  const n = parseVersionNumber(paramsOf(request).n);
  if (n === undefined) throw new ApiError('version_not_found');
  return n;
}

/** What the drop page's routes share: loading the page's data, and showing it again with a refusal. */
function dropPageKit(deps: ConsoleRouteDeps) {
  const hide = { schema: { hide: true } };
  const { baseUrl } = deps.config;
  const links = dropLinks(deps.config);
  const checkDetails = bodyChecker<drops.DetailsInput>(deps.schemas.PatchDropBody);
  /** The owner's drop with its versions, read receipts and a page of its comments (the newest, or older ones). */
  const load = async (v: Visit, slug: string, before?: number) => {
    if (!isValidSlug(slug)) throw new ApiError('not_found');
    const accountId = v.session.accountId;
    const { drop, versions, files } = await drops.listVersions(deps.drops, accountId, slug);
    const [viewStats, feedback, warnings, access] = await Promise.all([
      getStats(deps.stats, accountId, slug),
      comments.commentsOfDrop(deps.comments, accountId, slug, before),
      drops.versionWarnings(deps.drops, accountId, slug),
      readAccess(deps.accessLog, accountId, slug, 0),
    ]);
    const contentUrl = links.contentUrlOf(drop.contentLabel);
    return {
      drop,
      contentUrl,
      versions,
      files,
      stats: viewStats,
      comments: feedback,
      warnings,
      links: viewStats.links,
      access: access.slice(0, SHOWN_ACCESS_ENTRIES),
      ...(before === undefined ? {} : { commentsBefore: before }),
    };
  };
  /** The drop page, as a refusal shows it again: with the message, and what the owner typed into the details. */
  const again = async (v: Visit, request: FastifyRequest, error: string, withForm = false) => {
    const loaded = await load(v, paramsOf(request).slug);
    const body = request.body;
    // A form refused before it was read has no fields: the stored details are shown instead.
    const form =
      withForm && typeof body === 'object' && body !== null && 'title' in body
        ? {
            title: formField(body, 'title'),
            description: formField(body, 'description'),
            tags: formField(body, 'tags'),
            comments: formField(body, 'comments'),
            network: formField(body, 'network'),
            networkOrigins: formField(body, 'network_origins'),
          }
        : undefined;
    const sharing =
      withForm && typeof body === 'object' && body !== null && formField(body, 'visibility') !== ''
        ? { visibility: formField(body, 'visibility'), allow: formField(body, 'allow') }
        : undefined;
    return dropPage({
      who: v.who,
      nonce: v.nonce,
      baseUrl,
      ...loaded,
      error,
      ...(form === undefined ? {} : { form }),
      ...(sharing === undefined ? {} : { sharing }),
    });
  };
  const refused = (v: Visit, request: FastifyRequest, message: string) => again(v, request, message);
  return { hide, baseUrl, checkDetails, load, again, refused };
}

type DropPageKit = ReturnType<typeof dropPageKit>;

/** The newest access log entries the Sharing panel shows (the API and CLI give them all). */
const SHOWN_ACCESS_ENTRIES = 20;

/**
 * The Sharing panel's forms (docs/console.md, "Sharing"): who can see the drop (visibility and the list, one entry a
 * line), a new recipient link, and revoking one. Each is a console POST (Origin and CSRF checked) calling the domain
 * function the API uses. A new link's URL is shown on the answer to its POST only, never put in a redirect's URL.
 */
function registerSharing(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps, page: DropPageKit): void {
  app.post(
    '/console/drops/:slug/sharing',
    page.hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const allow = formField(request.body, 'allow')
          .split(/[\s,]+/)
          .filter((entry) => entry !== '');
        const input = { visibility: formField(request.body, 'visibility'), allow };
        await drops.updateDetails(deps.drops, session.accountId, slug, input);
        return `${pagePath(slug)}?done=sharing#sharing`;
      },
      refused: (v, request, message) => page.again(v, request, message, true),
    }),
  );
  app.post(
    '/console/drops/:slug/links/:id/revoke',
    page.hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug, id = '' } = paramsOf(request);
        await revokeLink(deps.links, session.accountId, slug, id);
        return `${pagePath(slug)}?done=link-revoked#sharing`;
      },
      refused: page.refused,
    }),
  );
  app.post(
    '/console/drops/:slug/links',
    page.hide,
    kit.page(async (v, request, reply) => {
      // The console's onRequest hook has checked the Origin and the session; the CSRF token is checked here.
      const session = deps.sessions.checkPost(request, WEB_SESSION);
      if (session === undefined) {
        const html = await page.again(v, request, 'This form did not come from your console. Try again.');
        return kit.refuse(reply, v, new ApiError('cross_site'), html);
      }
      const { slug } = paramsOf(request);
      try {
        await request.spendWrite(session.accountId);
        const made = await createLink(deps.links, session.accountId, slug, { label: formField(request.body, 'label') });
        const url = `${page.baseUrl}/p/${slug}?${LINK_PARAM}=${made.secret}`;
        const loaded = await page.load(v, slug);
        const html = dropPage({
          who: v.who,
          nonce: v.nonce,
          baseUrl: page.baseUrl,
          ...loaded,
          done: `Link for "${made.link.label}" created. Copy it now: it is shown only this once.`,
          createdLink: { label: made.link.label, url },
        });
        return kit.show(reply.header('cache-control', 'no-store'), v, html);
      } catch (error) {
        if (!isApiError(error) || error.code === 'not_found' || error.code === 'forbidden') throw error;
        return kit.refuse(reply, v, error, await page.again(v, request, refusalText(error)));
      }
    }),
  );
}

export function registerDropPages(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps): void {
  const page = dropPageKit(deps);
  registerDropViews(app, kit, page);
  registerDropEdits(app, kit, deps, page);
  registerExpiryAction(app, kit, deps, page);
  registerVersionAndCommentActions(app, kit, deps, page);
  registerCommentModeration(app, kit, deps, page);
  registerSharing(app, kit, deps, page);
  registerDiffPage(app, kit, deps);
  registerThumbnail(app, deps);
}

/**
 * `/console/drops/<slug>/preview.png[?v=<n>]`: a drop's thumbnail as its owner sees it (docs/console.md), the same
 * image as `/p/<slug>/preview.png` but for the signed-in owner, locked drops included. Signed out: 401; another
 * account's drop, an unknown drop or version: 404, the same for each.
 */
const SIGN_IN_PAGE = simplePage('Sign in', '<p>Sign in to <a href="/console">the console</a> to see this image.</p>');

function registerThumbnail(app: TypedApp, deps: ConsoleRouteDeps): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/console/drops/:slug/preview.png',
    schema: { hide: true },
    handler: async (request, reply) => {
      const session = deps.sessions.read<SessionPayload>(request, WEB_SESSION);
      if (session === undefined) return refusePage(reply, 'unauthorized', SIGN_IN_PAGE);
      const { slug } = paramsOf(request);
      const v = (request.query as Record<string, unknown>).v;
      try {
        const drop = await drops.getOwnedDrop(deps.drops, session.accountId, slug);
        let version = drop.latestVersion;
        if (v !== undefined) {
          const asked = parseVersionNumber(v);
          if (asked === undefined) throw new ApiError('version_not_found');
          version = (await drops.getVersion(deps.drops, session.accountId, slug, asked)).version.version;
        }
        return sendImage(request, reply, await deps.previews.imageOf(drop, { version }), 'private, no-cache');
      } catch (error) {
        if (isApiError(error) && ['not_found', 'forbidden', 'version_not_found', 'invalid_slug'].includes(error.code)) {
          return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
        }
        throw error;
      }
    },
  });
}

/** The drop page and the confirmation before deleting it. */
function registerDropViews(app: TypedApp, kit: ConsoleKit, { hide, baseUrl, load }: DropPageKit): void {
  app.get(
    '/console/drops/:slug',
    hide,
    kit.page(async (v, request, reply) => {
      const before = commentsBefore((request.query as Record<string, unknown>).comments_before);
      const loaded = await load(v, paramsOf(request).slug, before);
      return kit.show(reply, v, dropPage({ who: v.who, nonce: v.nonce, baseUrl, ...loaded, ...doneOf(request) }));
    }),
  );
  app.get(
    '/console/drops/:slug/delete',
    hide,
    kit.page(async (v, request, reply) => {
      const { drop } = await load(v, paramsOf(request).slug);
      return kit.show(reply, v, confirmDeletePage({ who: v.who, nonce: v.nonce, baseUrl, drop }));
    }),
  );
}

/** Details (title, description, tags, who may comment, network), the passcode, and deleting the drop. */
function registerDropEdits(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps, page: DropPageKit): void {
  const { hide, checkDetails, again, refused } = page;
  app.post(
    '/console/drops/:slug/details',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const body = request.body;
        const network = parseNetwork(formField(body, 'network'), formField(body, 'network_origins'));
        const input = checkDetails({
          title: formField(body, 'title'),
          description: formField(body, 'description'),
          metadata: parseTags(formField(body, 'tags')),
          ...(formField(body, 'comments') === '' ? {} : { comments: formField(body, 'comments') }),
          ...(network === undefined ? {} : { network }),
        });
        await drops.updateDetails(deps.drops, session.accountId, slug, input);
        return `${pagePath(slug)}?done=saved`;
      },
      refused: (v, request, message) => again(v, request, message, true),
    }),
  );
  app.post(
    '/console/drops/:slug/passcode',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const passcode = formField(request.body, 'passcode');
        await drops.setPasscode(deps.drops, session.accountId, slug, passcode);
        return `${pagePath(slug)}?done=${passcode === '' ? 'unlocked' : 'locked'}`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/delete',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        await drops.deleteDrop(deps.drops, session.accountId, paramsOf(request).slug);
        return '/console?done=deleted';
      },
      refused,
    }),
  );
}

/** The expiry form (docs/console.md): never, or one of EXPIRY_CHOICES from now. */
function registerExpiryAction(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps, page: DropPageKit): void {
  app.post(
    '/console/drops/:slug/expiry',
    page.hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const chosen = formField(request.body, 'expires');
        const choice = EXPIRY_CHOICES.find(([value]) => value === chosen);
        if (chosen !== 'never' && choice === undefined) {
          throw new ApiError('invalid_arg', { message: 'Choose when the drop expires from the list.' });
        }
        const expiresAt = choice === undefined ? null : deps.drops.clock.now() + choice[2];
        await drops.updateDetails(deps.drops, session.accountId, slug, { expires_at: expiresAt });
        return `${pagePath(slug)}?done=${expiresAt === null ? 'expiry-cleared' : 'expiry-set'}`;
      },
      refused: page.refused,
    }),
  );
}

/** Restoring and deleting versions; resolving and deleting comments. */
function registerVersionAndCommentActions(
  app: TypedApp,
  kit: ConsoleKit,
  deps: ConsoleRouteDeps,
  page: DropPageKit,
): void {
  const { hide, refused } = page;
  app.post(
    '/console/drops/:slug/versions/:n/restore',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        await drops.restoreVersion(deps.drops, session.accountId, slug, versionOf(request));
        return `${pagePath(slug)}?done=restored`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/versions/:n/delete',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        await drops.deleteVersion(deps.drops, session.accountId, slug, versionOf(request));
        return `${pagePath(slug)}?done=version-deleted`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/comments/:id/resolve',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug, id } = paramsOf(request);
        await comments.resolveComment(deps.comments, session.accountId, slug, id ?? '');
        return `${pagePath(slug)}?done=comment-resolved#comments`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/comments/:id/delete',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug, id } = paramsOf(request);
        await comments.deleteComment(deps.comments, session.accountId, slug, id ?? '');
        return `${pagePath(slug)}?done=comment-deleted#comments`;
      },
      refused,
    }),
  );
}

/** The comments ticked in the console's list: form fields `pick:<id>` (docs/console.md, "Comments"). */
export function pickedComments(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  return Object.keys(body)
    .filter((name) => name.startsWith('pick:'))
    .map((name) => name.slice('pick:'.length));
}

/**
 * Moderation in bulk (docs/console.md): delete the ticked comments, delete every guest comment of the drop, or let
 * only signed-in people comment from now on. Each is one POST, checked like every console POST, and one write.
 */
function registerCommentModeration(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps, page: DropPageKit): void {
  const { hide, refused, checkDetails } = page;
  app.post(
    '/console/drops/:slug/comments/delete',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const ids = pickedComments(request.body);
        if (ids.length === 0) {
          throw new ApiError('invalid_arg', {
            message: 'Tick the comments to delete first.',
            details: { field: 'ids' },
          });
        }
        await comments.deleteComments(deps.comments, session.accountId, slug, { ids });
        return `${pagePath(slug)}?done=comments-deleted#comments`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/comments/delete-guests',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        await comments.deleteComments(deps.comments, session.accountId, slug, { authorKind: 'guest' });
        return `${pagePath(slug)}?done=guest-comments-deleted#comments`;
      },
      refused,
    }),
  );
  app.post(
    '/console/drops/:slug/comments/setting',
    hide,
    kit.action({
      write: true,
      async run(session, request) {
        const { slug } = paramsOf(request);
        const input = checkDetails({ comments: formField(request.body, 'comments') });
        await drops.updateDetails(deps.drops, session.accountId, slug, input);
        return `${pagePath(slug)}?done=comments-${input.comments ?? 'saved'}#comments`;
      },
      refused,
    }),
  );
}
