/**
 * `GET /api/export` and `POST /api/import` (docs/api.md, "Export and import"): an account's drops as one streamed
 * zip, and such a zip brought back in. The import's body is a zip of its own size limit (HTMLDROP_MAX_IMPORT_BYTES),
 * refused from Content-Length before a byte is read and streamed to a temporary file, never held in memory.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Limits } from '../../config.js';
import { type ExportDeps, exportEntries } from '../../domain/export.js';
import { SLUG_PATTERN } from '../../domain/ids.js';
import { type ImportDeps, importArchive } from '../../domain/import.js';
import { ApiError } from '../../errors.js';
import { openArchive } from '../../portability/archive.js';
import { zipStream } from '../../portability/zip-writer.js';
import { callerOf } from '../caller.js';
import type { TypedApp } from '../typed-app.js';

/** What the export and import routes use. */
export interface PortabilityRouteDeps {
  readonly limits: Limits;
  readonly portability: { readonly export: ExportDeps; readonly import: ImportDeps };
}

const tooLarge = (max: number) =>
  new ApiError('body_too_large', {
    message: `An import takes an archive of at most ${max} bytes (HTMLDROP_MAX_IMPORT_BYTES).`,
    details: { max_bytes: max },
  });

/** The archive's file name for a download: the date of the export. */
export const exportFileName = (now: number) => `htmldrop-export-${new Date(now).toISOString().slice(0, 10)}.zip`;

/** Writes the request's body to `file`, counting; 413 body_too_large past `max` bytes. */
async function saveUpload(body: Readable, file: string, max: number): Promise<void> {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > max ? tooLarge(max) : null, chunk);
    },
  });
  await pipeline(body, counter, createWriteStream(file, { mode: 0o600 }));
}

export async function portabilityRoutes(app: TypedApp, deps: PortabilityRouteDeps): Promise<void> {
  const { limits, portability } = deps;
  app.get(
    '/api/export',
    {
      config: { auth: 'owner' },
      schema: {
        summary: "Export the caller's drops as one zip (every version, file, context, comment and receipt)",
        tags: ['portability'],
        querystring: Type.Object({
          slug: Type.Optional(
            Type.Union([
              Type.String({ pattern: SLUG_PATTERN }),
              Type.Array(Type.String({ pattern: SLUG_PATTERN }), { maxItems: 500 }),
            ]),
          ),
        }),
      },
    },
    async (request, reply) => {
      const slugs = [request.query.slug ?? []].flat();
      const entries = await exportEntries(portability.export, callerOf(request).account.id, slugs);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${exportFileName(portability.export.clock.now())}"`)
        .send(zipStream(entries));
    },
  );

  // The import's own body handling: the raw stream, whatever the type (checked in the handler), never parsed.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request: FastifyRequest, payload: Readable, done) => done(null, payload));
    scope.post(
      '/api/import',
      {
        config: { auth: 'owner', write: true },
        bodyLimit: limits.maxImportBytes,
        // After authentication, before the body is read: a declared size over the cap is refused unread.
        onRequest: async (request) => {
          const declared = Number(request.headers['content-length'] ?? 0);
          if (declared > limits.maxImportBytes) throw tooLarge(limits.maxImportBytes);
        },
        schema: {
          summary:
            'Import an export (a zip): drops are recreated with new slugs; the same archive twice creates nothing',
          tags: ['portability'],
        },
      },
      async (request) => {
        const type = String(request.headers['content-type'] ?? '')
          .split(';')[0]
          ?.trim()
          .toLowerCase();
        if (type !== 'application/zip') {
          throw new ApiError('invalid_archive', {
            message: 'Send the archive as the body, with Content-Type: application/zip.',
          });
        }
        const dir = await mkdtemp(path.join(os.tmpdir(), 'htmldrop-import-'));
        try {
          const file = path.join(dir, 'archive.zip');
          await saveUpload(request.body as Readable, file, limits.maxImportBytes);
          const archive = await openArchive(file, limits);
          try {
            return await importArchive(portability.import, callerOf(request).account.id, archive);
          } finally {
            archive.close();
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    );
  });
}
