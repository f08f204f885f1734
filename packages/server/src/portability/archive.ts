/**
 * An uploaded export, opened for the import of domain/import.ts (docs/api.md, "Export and import"): the zip's
 * directory checked (zip-reader.ts), every entry name in the layout of the format, the manifest's format and version,
 * and each JSON document valid against its schema (schemas.ts) before the domain sees it.
 */
import type { Limits } from '../config.js';
import type { ArchiveSource } from '../domain/import.js';
import {
  ARCHIVE_FORMAT,
  type ArchivedDrop,
  type CommentJson,
  type DropJson,
  dropEntry,
  FORMAT_VERSION,
  MANIFEST_ENTRY,
  type ManifestJson,
  type VersionJson,
  versionEntry,
} from '../domain/portability.js';
import { ApiError } from '../errors.js';
import { type SchemaName, validated } from './schemas.js';
import { openZip } from './zip-reader.js';

/** Inflated bytes a JSON document of an archive may have. */
const MAX_JSON_BYTES = 64 * 1_048_576;
/** Entries of one archive, at most: far above 500 drops of 200 versions with a few files each. */
const MAX_ENTRIES = 1_000_000;

/** Every name an export holds: the manifest, a drop's documents, or an entry of one of its versions. */
const LAYOUT =
  /^(manifest\.json|drops\/[A-Za-z0-9_-]{1,64}\/((drop|versions|comments|stats)\.json|v\/[1-9][0-9]{0,9}\/.+))$/;

const invalid = (message: string, details: Record<string, unknown> = {}) =>
  new ApiError('invalid_archive', { message, details });

export interface OpenedArchive extends ArchiveSource {
  close(): void;
}

/** Opens the export at `file`; 400 invalid_archive when it is not one (nothing has been written). */
export async function openArchive(file: string, limits: Limits): Promise<OpenedArchive> {
  const zip = await openZip(file, { maxEntries: MAX_ENTRIES, maxTotalBytes: limits.maxImportInflatedBytes });
  try {
    for (const name of zip.names) {
      if (!LAYOUT.test(name))
        throw invalid(`The entry ${JSON.stringify(name)} is not part of an export.`, { entry: name });
    }
    const document = async <T>(name: string, schema: SchemaName): Promise<T> => {
      const bytes = await zip.read(name, MAX_JSON_BYTES);
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        throw invalid(`${name} is not JSON.`, { entry: name });
      }
      return validated<T>(schema, name, value);
    };
    if (!zip.names.has(MANIFEST_ENTRY))
      throw invalid('The archive has no manifest.json: it is not an htmldrop export.');
    const raw = await document<Record<string, unknown>>(MANIFEST_ENTRY, 'manifest.schema.json').catch(async (error) => {
      // Say so plainly when the manifest is of another format or a version this service does not know.
      const bytes = await zip.read(MANIFEST_ENTRY, MAX_JSON_BYTES).catch(() => Buffer.alloc(0));
      let parsed: { format?: unknown; format_version?: unknown } = {};
      try {
        parsed = JSON.parse(bytes.toString('utf8')) as typeof parsed;
      } catch {}
      if (parsed.format !== undefined && parsed.format !== ARCHIVE_FORMAT) {
        throw invalid(`manifest.json is of the format ${JSON.stringify(parsed.format)}, not ${ARCHIVE_FORMAT}.`);
      }
      if (parsed.format_version !== undefined && parsed.format_version !== FORMAT_VERSION) {
        throw invalid(
          `manifest.json has format_version ${JSON.stringify(parsed.format_version)}; this service reads ${FORMAT_VERSION}.`,
          { format_version: parsed.format_version, supported: [FORMAT_VERSION] },
        );
      }
      throw error;
    });
    const manifest = raw as unknown as ManifestJson;
    return {
      manifest,
      async drop(slug): Promise<ArchivedDrop | undefined> {
        if (!zip.names.has(dropEntry(slug, 'drop.json'))) return undefined;
        const drop = await document<DropJson>(dropEntry(slug, 'drop.json'), 'drop.schema.json');
        const versions = await document<VersionJson[]>(dropEntry(slug, 'versions.json'), 'versions.schema.json');
        const comments = zip.names.has(dropEntry(slug, 'comments.json'))
          ? await document<CommentJson[]>(dropEntry(slug, 'comments.json'), 'comments.schema.json')
          : [];
        return { drop, versions, comments };
      },
      entry: (slug, version, name, maxBytes) => zip.read(versionEntry(slug, version, name), maxBytes),
      close: () => zip.close(),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}
