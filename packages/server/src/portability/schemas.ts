/**
 * The JSON Schemas of an export's documents (docs/api.md, "Export and import"), published as docs/schemas/*.json
 * for other tools (the portability test checks that those files are these schemas). An import validates every
 * document against them with Ajv, compiled on the first import rather than at start-up.
 */
import type { ValidateFunction } from 'ajv';
import { ApiError } from '../errors.js';

const DRAFT = 'http://json-schema.org/draft-07/schema#';
const BASE = 'https://htmldrop.dev/schemas';

const time = { type: 'integer', minimum: 0 } as const;
const slug = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
const versionNumber = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

export const MANIFEST_SCHEMA = {
  $schema: DRAFT,
  $id: `${BASE}/manifest.schema.json`,
  title: 'htmldrop export: manifest.json',
  type: 'object',
  required: ['format', 'format_version', 'exported_at', 'user_id', 'drops'],
  properties: {
    format: { const: 'htmldrop-export' },
    format_version: { const: 1 },
    exported_at: time,
    user_id: { type: 'string', minLength: 1, maxLength: 128 },
    drops: {
      type: 'array',
      items: {
        type: 'object',
        required: ['slug', 'title', 'latest_version'],
        properties: { slug, title: { type: 'string' }, latest_version: versionNumber },
      },
    },
  },
} as const;

export const DROP_SCHEMA = {
  $schema: DRAFT,
  $id: `${BASE}/drop.schema.json`,
  title: 'htmldrop export: drops/<slug>/drop.json',
  type: 'object',
  required: ['slug', 'title', 'description', 'metadata', 'created_at', 'updated_at', 'latest_version', 'settings'],
  properties: {
    slug,
    title: { type: 'string' },
    description: { type: ['string', 'null'] },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created_at: time,
    updated_at: time,
    latest_version: versionNumber,
    settings: {
      type: 'object',
      required: ['comments', 'network', 'visibility', 'allow', 'expires_at', 'passcode_hash'],
      properties: {
        comments: { enum: ['off', 'signed_in', 'open'] },
        network: {
          oneOf: [{ enum: ['open', 'none'] }, { type: 'array', items: { type: 'string' }, minItems: 1 }],
        },
        visibility: { type: 'string' },
        allow: { type: 'array', items: { type: 'string' } },
        expires_at: { type: ['integer', 'null'], minimum: 0 },
        passcode_hash: { type: ['string', 'null'], maxLength: 512 },
      },
    },
  },
} as const;

export const VERSIONS_SCHEMA = {
  $schema: DRAFT,
  $id: `${BASE}/versions.schema.json`,
  title: 'htmldrop export: drops/<slug>/versions.json',
  type: 'array',
  items: {
    type: 'object',
    required: ['version', 'created_at', 'size_bytes', 'context', 'files'],
    properties: {
      version: versionNumber,
      created_at: time,
      size_bytes: { type: 'integer', minimum: 0 },
      context: { oneOf: [{ type: 'string', pattern: '^context(-[0-9]+)?\\.md$' }, { type: 'null' }] },
      files: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'size_bytes', 'content_type', 'sha256'],
          properties: {
            path: { type: 'string', minLength: 1, maxLength: 255 },
            size_bytes: { type: 'integer', minimum: 0 },
            content_type: { type: 'string' },
            sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          },
        },
      },
    },
  },
} as const;

export const COMMENTS_SCHEMA = {
  $schema: DRAFT,
  $id: `${BASE}/comments.schema.json`,
  title: 'htmldrop export: drops/<slug>/comments.json',
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'version', 'body', 'quote', 'author', 'created_at', 'resolved_at', 'resolved_in_version'],
    properties: {
      id: { type: 'string' },
      version: versionNumber,
      body: { type: 'string', minLength: 1 },
      quote: { type: ['string', 'null'] },
      author: {
        type: 'object',
        required: ['name', 'kind'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          kind: { enum: ['owner', 'member', 'guest'] },
        },
      },
      created_at: time,
      resolved_at: { type: ['integer', 'null'], minimum: 0 },
      resolved_in_version: { oneOf: [versionNumber, { type: 'null' }] },
    },
  },
} as const;

/** Every published schema, by the name of its file under docs/schemas/. */
export const ARCHIVE_SCHEMAS = {
  'manifest.schema.json': MANIFEST_SCHEMA,
  'drop.schema.json': DROP_SCHEMA,
  'versions.schema.json': VERSIONS_SCHEMA,
  'comments.schema.json': COMMENTS_SCHEMA,
} as const;

export type SchemaName = keyof typeof ARCHIVE_SCHEMAS;

let validators: Promise<Map<SchemaName, ValidateFunction>> | undefined;

/** Ajv and the compiled validators, on first use. */
function compiled(): Promise<Map<SchemaName, ValidateFunction>> {
  validators ??= import('ajv').then((module) => {
    // The class is the module's `Ajv`, or its default export once bundled (CommonJS seen through a dynamic import).
    type AjvClass = typeof import('ajv').Ajv;
    const loaded = module as unknown as { Ajv?: AjvClass; default?: AjvClass & { Ajv?: AjvClass } };
    const Ajv = (loaded.Ajv ?? loaded.default?.Ajv ?? loaded.default) as AjvClass;
    const ajv = new Ajv({ allErrors: false, strict: false });
    return new Map(
      Object.entries(ARCHIVE_SCHEMAS).map(([name, schema]) => [name as SchemaName, ajv.compile(schema)] as const),
    );
  });
  return validators;
}

/** The document `value` of `entry` when it is valid against the schema; 400 invalid_archive otherwise. */
export async function validated<T>(name: SchemaName, entry: string, value: unknown): Promise<T> {
  const validate = (await compiled()).get(name) as ValidateFunction;
  if (validate(value)) return value as T;
  const first = validate.errors?.[0];
  throw new ApiError('invalid_archive', {
    message: `${entry} does not match ${name}: ${first?.instancePath || '/'} ${first?.message ?? 'is not valid'}.`,
    details: { entry, schema: name },
  });
}
