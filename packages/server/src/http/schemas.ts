/**
 * Route schemas: they validate requests (validation.ts maps failures to the spec's codes) and generate
 * /openapi.json. One source of truth; built from the configured limits.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { Limits } from '../config.js';
import { SLUG_PATTERN, TOKEN_ID_PATTERN } from '../domain/ids.js';
import { MAX_QUERY_CHARS } from '../domain/search.js';

/** docs/api.md 2.2: 1-64 of [A-Za-z0-9_.-], first and last alphanumeric or underscore. */
export const METADATA_KEY_PATTERN = '^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$';

const Millis = (description: string) => Type.Integer({ description: `${description} (Unix time in milliseconds)` });

/**
 * One of `values`, as JSON Schema's `enum`. Not TypeBox's union of literals: that is an `anyOf`, which
 * fast-json-stringify serializes by running the validator on the value first, for every drop of a list.
 */
function OneOf<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * `schema` or null as one type list (`type: ['string', 'null']`), for the same reason as OneOf(): an `anyOf` with
 * null made every listed drop's `content_url` go through the validator's long `uri` expression before it was written
 * (docs/decisions/0028-composition-root-ports-and-a-lean-process.md, "Where the targets stand").
 */
function OrNull<T extends TSchema & { type: string }>(schema: T, options: { description?: string } = {}) {
  // A plain copy: the TypeBox kind (a symbol) would make TypeBox read the result as the non-null type.
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ ...plain, ...options, type: [schema.type, 'null'] });
}

/** The request fields several bodies share, each bounded by the configured limits. */
function fieldSchemas(limits: Limits) {
  const Metadata = Type.Unsafe<Record<string, string>>({
    type: 'object',
    description: `Owner-only tags: at most ${limits.maxMetadataKeys} keys; keys 1-${limits.maxMetadataKeyChars} of [A-Za-z0-9_.-] without leading or trailing dot or hyphen; string values of at most ${limits.maxMetadataValueChars} characters. Replaces the whole map; {} clears it.`,
    maxProperties: limits.maxMetadataKeys,
    propertyNames: { type: 'string', pattern: METADATA_KEY_PATTERN, maxLength: limits.maxMetadataKeyChars },
    additionalProperties: { type: 'string', maxLength: limits.maxMetadataValueChars },
  });

  const title = Type.String({
    minLength: 1,
    maxLength: limits.maxTitleChars,
    description: `At most ${limits.maxTitleChars} characters.`,
  });
  const description = Type.String({
    maxLength: limits.maxDescriptionChars,
    description: `At most ${limits.maxDescriptionChars} characters; "" clears it.`,
  });
  const html = Type.String({
    description: `A complete, standalone HTML document of at most ${limits.maxHtmlBytes} bytes (UTF-8).`,
  });
  const context = Type.String({
    description: `Optional reasoning trace for this version, at most ${limits.maxContextBytes} bytes (UTF-8). Shown on the public viewer behind a toggle.`,
  });
  const passcode = Type.String({
    description: `At least ${limits.minPasscodeChars} characters; "" means no passcode.`,
  });
  // Paths and counts are checked by the domain (domain/files.ts), which names the path at fault.
  const files = Type.Record(
    Type.String(),
    Type.Object(
      {
        content: Type.String({ description: 'The text, or the bytes in base64 with encoding "base64"' }),
        encoding: Type.Optional(Type.Literal('base64')),
      },
      { additionalProperties: false },
    ),
    {
      description: `Files beside the HTML, loaded by relative URL: path (1-255 bytes of /-separated [A-Za-z0-9._-] segments; not index.html at the top) to {content} or {content, encoding: "base64"}. At most ${limits.maxFilesPerVersion} files; HTML and files together at most ${limits.maxVersionBytes} bytes. A version without files when absent.`,
    },
  );
  return { Metadata, title, description, html, context, passcode, files };
}

type Fields = ReturnType<typeof fieldSchemas>;

/** Who may comment on a drop (docs/api.md, "Comments"). */
const CommentSetting = OneOf(['off', 'signed_in', 'open'], {
  description:
    'Who may comment: off, signed_in (anyone signed in through the identity provider; default), open (anyone who can view it, with a name)',
});

/** What a drop's documents may load (docs/api.md, "Each drop on its own origin"; checked by domain/network.ts). */
const NetworkPolicy = Type.Union(
  [
    Type.Literal('open'),
    Type.Literal('none'),
    Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 10 }),
  ],
  {
    description:
      'open (default): anything; none: nothing from the network (inline and data: content only); or 1-10 origins such as https://cdn.jsdelivr.net it may load from',
  },
);

/** Who can see a drop (docs/api.md, "Who can see a drop"; checked by domain/visibility.ts). */
const Visibility = OneOf(['public', 'signed_in', 'people'], {
  description:
    'public (default): anyone with the URL; signed_in: anyone who signs in through the identity provider; people: the owner and those in allow',
});

/** The list of `people`: usernames, email addresses, `@domain` (checked by domain/visibility.ts). */
const Allow = Type.Array(Type.String({ maxLength: 254 }), {
  maxItems: 100,
  description:
    'Up to 100 provider usernames, email addresses or @domain (any verified email at that domain); in effect while visibility is people',
});

/** One finding of the look before publishing (docs/api.md, "A look before publishing"); never the secret itself. */
export const Finding = Type.Object(
  {
    kind: OneOf(['secret', 'personal_data']),
    rule: Type.String({ description: 'The rule that matched, e.g. htmldrop/aws-access-key-id or personal/iban' }),
    where: Type.String({ description: 'html, context or files/<path>' }),
    line: Type.Integer({ minimum: 1, description: 'Line in that text, from 1' }),
    excerpt: Type.String({ description: 'The match masked: at most its first and last 4 characters' }),
  },
  { additionalProperties: false },
);

const WARNINGS_DESCRIPTION =
  'Writes only (POST, PUT): what the look before publishing found in the new version; absent when clean.';

/** `scan` of a write: warn (default) answers findings, block refuses the write on any (422 sensitive_content). */
const ScanField = Type.Union([Type.Literal('warn'), Type.Literal('block')], {
  description:
    'warn (default): findings come back as warnings; block: any finding refuses the write (422 sensitive_content, nothing stored). HTMLDROP_SCAN=block forces block.',
});

/** The two named components (`$id`) responses refer to: a drop and the error envelope. */
function componentSchemas() {
  const Drop = Type.Object(
    {
      slug: Type.String(),
      title: Type.String(),
      description: Type.String({ description: '"" when none' }),
      url: Type.String({ format: 'uri', description: 'Public viewer: {base_url}/p/<slug>' }),
      raw_url: Type.String({ format: 'uri', description: 'Raw HTML: {base_url}/p/<slug>/raw' }),
      locked: Type.Boolean({ description: 'True while a passcode is set' }),
      latest_version: Type.Integer(),
      view_count: Type.Integer(),
      comments: CommentSetting,
      metadata: Type.Record(Type.String(), Type.String()),
      created_at: Millis('Creation time'),
      updated_at: Millis('Last change'),
      expires_at: OrNull(Millis('When the drop stops being served and is deleted'), {
        description: 'Unix ms; null: never expires',
      }),
      network: NetworkPolicy,
      visibility: Visibility,
      allow: Type.Array(Type.String(), { description: "Who may see a people drop (the owner's answers only)" }),
      content_url: OrNull(Type.String({ format: 'uri' }), {
        description:
          "The drop's own origin (https://<id>.<content domain>/), where its storage works; null when none is configured",
      }),
      warnings: Type.Optional(Type.Array(Finding, { description: WARNINGS_DESCRIPTION })),
      match: Type.Optional(
        Type.Object(
          {
            snippet: Type.String({ description: 'Plain text around the first match, "…" where it was cut' }),
            fields: Type.Array(
              Type.Union([
                Type.Literal('title'),
                Type.Literal('description'),
                Type.Literal('content'),
                Type.Literal('context'),
              ]),
              { description: 'The fields holding a word of q' },
            ),
          },
          { additionalProperties: false, description: 'Only in an answer to a search (q)' },
        ),
      ),
    },
    { $id: 'Drop', additionalProperties: false },
  );

  const ErrorBody = Type.Object(
    {
      error: Type.Object({
        code: Type.String({ description: 'Machine-readable code (spec section 7); clients switch on this' }),
        message: Type.String(),
        details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
    },
    { $id: 'Error' },
  );
  return { Drop, ErrorBody };
}

function paramSchemas() {
  const SlugParams = Type.Object({ slug: Type.String({ pattern: SLUG_PATTERN }) });
  const VersionParams = Type.Object({
    slug: Type.String({ pattern: SLUG_PATTERN }),
    // Checked in the handler, after the drop: a path under an unknown drop is 404 whatever follows (docs/api.md 4.3).
    n: Type.String({ description: 'Version number (integer from 1)' }),
  });
  const TokenParams = Type.Object({ id: Type.String({ pattern: TOKEN_ID_PATTERN, description: '12 lowercase hex' }) });
  return { SlugParams, VersionParams, TokenParams };
}

/** docs/api.md, "Expiry": 60 s to 365 days from now (checked by the domain), or null for never. */
const ExpiresAt = Type.Union([Type.Integer(), Type.Null()], {
  description: 'Unix ms between now + 60 s and now + 365 days; null: never expires',
});

/** The headers of the history extensions (docs/api.md, "History and safe writers"), described for OpenAPI. */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'The drop\'s ETag ("<latest_version>") or *: otherwise 412 version_conflict' }),
  ),
});
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: '1-255 visible ASCII: a repeat with the same body replays the first success' }),
  ),
});

/** The bodies of /api/drops writes. */
function dropBodySchemas({ Metadata, title, description, html, context, passcode, files }: Fields) {
  return {
    CreateDropBody: Type.Object({
      title,
      description: Type.Optional(description),
      html,
      files: Type.Optional(files),
      passcode: Type.Optional(passcode),
      context: Type.Optional(context),
      metadata: Type.Optional(Metadata),
      comments: Type.Optional(CommentSetting),
      expires_at: Type.Optional(ExpiresAt),
      network: Type.Optional(NetworkPolicy),
      visibility: Type.Optional(Visibility),
      allow: Type.Optional(Allow),
      scan: Type.Optional(ScanField),
    }),
    PutDropBody: Type.Object({
      html,
      files: Type.Optional(files),
      title: Type.Optional(title),
      description: Type.Optional(description),
      context: Type.Optional(context),
      metadata: Type.Optional(Metadata),
      resolves: Type.Optional(
        Type.Array(Type.String({ maxLength: 40 }), {
          maxItems: 200,
          description: 'Ids of comments this version addresses: they are marked resolved in it.',
        }),
      ),
      visibility: Type.Optional(Visibility),
      allow: Type.Optional(Allow),
      scan: Type.Optional(ScanField),
    }),
    PatchDropBody: Type.Object({
      title: Type.Optional(title),
      description: Type.Optional(description),
      metadata: Type.Optional(Metadata),
      comments: Type.Optional(CommentSetting),
      expires_at: Type.Optional(ExpiresAt),
      network: Type.Optional(NetworkPolicy),
      visibility: Type.Optional(Visibility),
      allow: Type.Optional(Allow),
    }),
    PasscodeBody: Type.Object({ passcode }),
  };
}

/** The query of GET /api/drops: paging, sorting and metadata filters. */
function listQuerySchema(limits: Limits) {
  return Type.Object(
    {
      page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
      pageSize: Type.Integer({ minimum: 1, maximum: limits.maxPageSize, default: limits.defaultPageSize }),
      // No default: with q, relevance unless a sort is asked for (the route applies created_at otherwise).
      sortBy: Type.Optional(
        Type.Union([Type.Literal('created_at'), Type.Literal('updated_at'), Type.Literal('view_count')], {
          description: 'created_at when absent; with q, best match first when absent',
        }),
      ),
      q: Type.Optional(
        Type.String({
          maxLength: MAX_QUERY_CHARS,
          description:
            'Full-text search: drops whose title, description, latest text or context hold every word (the last as a prefix); query syntax is plain text',
        }),
      ),
      sortOrder: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' }),
    },
    {
      patternProperties: {
        '^metadata\\.': Type.String({ maxLength: limits.maxMetadataValueChars }),
      },
      description: 'metadata.<key>=<value> filters (repeat for AND).',
    },
  );
}

/** A version's files and its total size, as Version and VersionListItem carry them. */
const VersionFiles = {
  files: Type.Array(
    Type.Object(
      {
        path: Type.String(),
        size_bytes: Type.Integer({ description: 'Bytes of the file as uploaded (decoded)' }),
        content_type: Type.String({ description: 'Served with this Content-Type (from the extension)' }),
        sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex' }),
      },
      { additionalProperties: false },
    ),
    { description: 'Files beside the HTML, sorted by path; [] when none' },
  ),
  total_bytes: Type.Integer({ description: 'The HTML plus the files: the sum the version limit applies to' }),
};

/** The other response shapes: a list page, versions and tokens. */
function responseSchemas() {
  return {
    Pagination: Type.Object({
      page: Type.Integer(),
      page_size: Type.Integer(),
      total_items: Type.Integer(),
      total_pages: Type.Integer(),
      sort_by: Type.String(),
      sort_order: Type.String(),
    }),
    VersionListItem: Type.Object({
      version: Type.Integer(),
      size_bytes: Type.Integer({ description: 'UTF-8 bytes of the HTML as uploaded' }),
      has_context: Type.Boolean(),
      created_at: Millis('Upload time'),
      is_latest: Type.Boolean(),
      ...VersionFiles,
    }),
    Version: Type.Object({
      slug: Type.String(),
      version: Type.Integer(),
      size_bytes: Type.Integer({ description: 'UTF-8 bytes of the HTML as uploaded' }),
      context: OrNull(Type.String()),
      created_at: Millis('Upload time'),
      is_latest: Type.Boolean(),
      ...VersionFiles,
    }),
    Token: Type.Object({
      id: Type.String({ description: 'First 12 hex characters of the token hash' }),
      label: OrNull(Type.String()),
      created_at: Type.Integer(),
      last_used_at: OrNull(Type.Integer()),
      expires_at: OrNull(Millis('When the token stops working'), {
        description: 'null: never (device-flow and operator tokens)',
      }),
      oauth_client: Type.Union(
        [
          Type.Object({
            id: Type.String({ description: 'client_id (hdc_...)' }),
            name: Type.Union([Type.String(), Type.Null()], { description: "The client's registered name" }),
          }),
          Type.Null(),
        ],
        { description: 'The OAuth client the token was issued to; null for device-flow and operator tokens' },
      ),
      renewable_until: Type.Union([Millis('Until when its client may renew it with its refresh token'), Type.Null()], {
        description: 'OAuth tokens; each renewal moves it 30 days on',
      }),
    }),
  };
}

/** The answer of GET /api/drops/<slug>/stats (docs/api.md, "Read receipts"). */
function statsSchemas() {
  const lastViewed = Type.Union([Millis('Latest render'), Type.Null()], { description: 'null when never viewed' });
  return {
    DropStats: Type.Object(
      {
        links: Type.Array(
          Type.Object(
            { id: Type.String(), label: Type.String(), views: Type.Integer(), last_viewed_at: lastViewed },
            { additionalProperties: false },
          ),
          { description: 'Each recipient link, newest first, with the views it opened' },
        ),
        views: Type.Integer({ description: "Viewer renders: equals the drop's view_count; may lag by up to 5 s" }),
        unique_viewers: Type.Integer({
          description:
            'Distinct viewers (client address and User-Agent, hashed under a key that changes every UTC day)',
        }),
        first_viewed_at: Type.Union([Millis('Earliest render'), Type.Null()], {
          description: 'null when never viewed',
        }),
        last_viewed_at: lastViewed,
        versions: Type.Array(
          Type.Object(
            {
              version: Type.Integer(),
              views: Type.Integer(),
              unique_viewers: Type.Integer(),
              last_viewed_at: lastViewed,
            },
            { additionalProperties: false },
          ),
          { description: 'Every existing version, newest first' },
        ),
      },
      { additionalProperties: false },
    ),
  };
}

/** The legacy shapes validate context and metadata exactly as /api/drops does (docs/api.md 4.7). */
function legacyBodySchemas({ Metadata, title, description, html, context, passcode }: Omit<Fields, 'files'>) {
  return {
    LegacyCreateBody: Type.Object({
      title,
      description: Type.Optional(description),
      html,
      password: Type.Optional(passcode),
      context: Type.Optional(context),
      metadata: Type.Optional(Metadata),
    }),
    LegacyPutBody: Type.Object({
      title: Type.Optional(title),
      description: Type.Optional(description),
      html: Type.Optional(html),
      context: Type.Optional(context),
      metadata: Type.Optional(Metadata),
    }),
    LegacyPasswordBody: Type.Object({ password: passcode }),
  };
}

/** Every route schema, keyed by name. */
export function createSchemas(limits: Limits) {
  const fields = fieldSchemas(limits);
  return {
    Metadata: fields.Metadata,
    ...componentSchemas(),
    ...paramSchemas(),
    ...dropBodySchemas(fields),
    ListQuery: listQuerySchema(limits),
    ...responseSchemas(),
    ...statsSchemas(),
    ...legacyBodySchemas(fields),
  };
}

export type Schemas = ReturnType<typeof createSchemas>;
