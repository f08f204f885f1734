/** The input fields several tools share, and the standalone-document rule their descriptions state. */
import { z } from 'zod';

export const STANDALONE_RULE =
  'The HTML must be ONE complete, standalone HTML document: start with <!doctype html>, keep CSS and JavaScript inline ' +
  '(or load them from public https:// CDNs), embed images as data: URLs or use absolute https:// URLs. Relative ' +
  'references to local files (images, stylesheets, scripts, data, fonts, other pages) will NOT load unless those ' +
  'files are uploaded with it as `files` (or as a `folder`, where offered): otherwise only this one document is ' +
  'uploaded, and it is shown in a sandboxed iframe. No build step happens. At most 2 MiB (2097152 bytes) of HTML; ' +
  'with its files at most 500 files and 20 MiB in all.';

export const slug = z.string().min(1).max(64).describe('The drop identifier (the last part of its url).');
export const metadata = z
  .record(z.string(), z.string())
  .describe(
    'Owner-only tags (string values; at most 10 keys of [A-Za-z0-9_.-], values up to 256 characters). Never shown publicly.',
  );
/** A file's content as the remote server takes it (docs/api.md, "Many files in one drop"). */
const fileContent = z.object({
  content: z.string().describe('The text, or the bytes in base64 with encoding "base64".'),
  encoding: z.literal('base64').optional(),
});

/**
 * The document fields of publish and update: `html` and its `files`, plus `file` and `folder` where the server may
 * read the caller's files (there `files` are paths on disk; remotely they are contents).
 */
export interface DocumentInputSchema {
  readonly html: z.ZodOptional<z.ZodString>;
  readonly file?: z.ZodOptional<z.ZodString>;
  readonly folder?: z.ZodOptional<z.ZodString>;
  readonly files: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString | typeof fileContent>>;
}

const FILES_RULE =
  'Paths in the drop are 1-255 bytes of /-separated names of letters, digits, ".", "_", "-" (not index.html at the ' +
  'top: that is the html). The document loads them by relative URL (img/chart.png, not /img/chart.png); every ' +
  'version shows its own files. A new version without files has none.';

/**
 * The document fields for a server that reads files on its own machine (stdio: `html` or `file`) or not (the
 * service's remote endpoint, docs/api.md "Remote MCP and OAuth": `html` only, since there the "machine running this
 * MCP server" is the service).
 */
export function documentInput(files: boolean): DocumentInputSchema {
  if (!files) {
    return {
      html: z.string().optional().describe(`The document (required). ${STANDALONE_RULE}`),
      files: z
        .record(z.string(), fileContent)
        .optional()
        .describe(
          `Files beside the document (images, CSS, scripts, JSON, fonts), by path in the drop: {"img/chart.png": {"content": "<base64>", "encoding": "base64"}, "style.css": {"content": "<text>"}}. ${FILES_RULE}`,
        ),
    };
  }
  return {
    html: z.string().optional().describe(`The document. ${STANDALONE_RULE} Give html, file or folder, one of them.`),
    file: z
      .string()
      .optional()
      .describe(
        'Instead of html: path of an .html file on the machine running this MCP server (relative to its working directory).',
      ),
    folder: z
      .string()
      .optional()
      .describe(
        "Instead of html: a folder on the machine running this MCP server (a report with its charts, a build's dist/): its index.html is the document and every other file in it goes with it (dotfiles skipped). Relative to its working directory.",
      ),
    files: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        `With html or file: files beside the document, by path in the drop to a path on the machine running this MCP server: {"img/chart.png": "out/chart.png"}. ${FILES_RULE}`,
      ),
  };
}
export const commentSetting = z
  .enum(['off', 'signed_in', 'open'])
  .describe(
    "Who may comment in the viewer's Comments panel: off, signed_in (people signed in to the service; the default for a new drop) or open (anyone who can view it, with a name).",
  );
export const resolves = z
  .array(z.string().min(1).max(40))
  .max(200)
  .describe(
    'Ids of comments (c_..., from get_feedback) this new version addresses: they are marked resolved in it. An id that is not a comment of the drop is invalid_arg and nothing is written.',
  );
export const expires = z
  .string()
  .min(1)
  .max(40)
  .describe(
    'When the drop expires: a duration from now (30m, 12h, 7d, 2w), an ISO 8601 date or time (2026-12-31, 2026-12-31T18:00:00Z; UTC unless a zone is given), or "never" (no expiry; on an existing drop it clears one). From 1 minute to 365 days ahead. At that instant its url answers 410 Gone and the drop is deleted within the hour.',
  );
export const network = z
  .union([z.enum(['open', 'none']), z.array(z.string().min(1).max(200)).min(1).max(10)])
  .describe(
    'What the drop may load from the network, enforced by the browser: "open" (anything; the default for a new drop), "none" (nothing: no fetch, images, scripts, fonts or frames from other hosts, no form posts; set none for sensitive reports: its own requests (fetch, images, scripts, form posts) reach no other site), or a list of 1 to 10 origins it may load from and nothing else, e.g. ["https://cdn.jsdelivr.net","https://unpkg.com"] (scheme and host, optional port; no path, no trailing slash). Inline CSS, JavaScript and data: URLs always work.',
  );
export const ifMatch = z
  .number()
  .int()
  .min(1)
  .describe(
    "Only if this is still the drop's latest_version (as you last read it): otherwise nothing changes and the error is version_conflict with details.latest_version. Guards against overwriting a version someone else published meanwhile.",
  );
export const version = z.number().int().min(1);
export const scan = z
  .enum(['warn', 'block'])
  .describe(
    'What happens when the service finds what looks like secrets or personal data (API keys, private keys, tokens, passwords in URLs, card numbers, IBANs, lists of email addresses or phone numbers) in the html or context: "warn" (the default) publishes and lists them in warnings; "block" publishes nothing and fails with sensitive_content. Prefer "block" for documents built from data you have not checked.',
  );

/** Who can see a drop (docs/api.md, "Who can see a drop"). */
export const visibility = z
  .enum(['public', 'signed_in', 'people'])
  .describe(
    'Who can see the drop: "public" (anyone with the URL; the default for a new drop), "signed_in" (anyone who signs in to the service: with an organisation\'s identity provider, its people), or "people" (you and those in `allow`). Someone else, such as a client, can be sent a recipient link (create_link) whatever the visibility.',
  );
export const allow = z
  .array(z.string().min(1).max(254))
  .max(100)
  .describe(
    'Who may see a "people" drop: provider usernames ("dana"), email addresses ("dana@client.example") or "@domain" (anyone whose verified email is at that domain); at most 100. Replaces the list.',
  );
