/**
 * Pre-upload checks. A drop is rendered alone in a sandboxed iframe (docs/api.md section 4.6), so anything the
 * document expects from beside it on disk is lost. These are heuristics over the text (no parser dependency): they
 * warn, they never change the document.
 */
import { HtmlDropError } from './errors.js';

/** The service's limit on the HTML of one version (docs/api.md section 8). */
export const MAX_HTML_BYTES = 2_097_152;
/** Warn above this share of the limit. */
const NEAR_LIMIT = 0.9;
/** At most this many distinct references are named in one warning. */
const MAX_NAMED = 8;

export type HtmlWarningCode =
  | 'missing_doctype'
  | 'relative_reference'
  | 'size_near_limit'
  | 'fragment'
  /** A folder drop (folder.ts): a reference that is absolute, leaves the folder, or names no file of it. */
  | 'absolute_reference'
  | 'outside_reference'
  | 'missing_file';

export interface HtmlWarning {
  readonly code: HtmlWarningCode;
  readonly message: string;
  /** For relative_reference: the references found. */
  readonly references?: readonly string[];
}

export interface CheckOptions {
  readonly maxBytes?: number;
}

const DOCTYPE = /^(?:\s|<!--[\s\S]*?-->)*<!doctype\s+html\b/i;
const DOCUMENT_TAG = /<(?:html|head|body)\b[^>]*>/i;
const ANY_TAG = /<\/?[a-z][a-z0-9-]*\b[^>]*>/i;
/** Absolute URLs, protocol-relative, data/blob/mail/tel/js, fragments, template placeholders. */
const SAFE_REFERENCE = /^(?:[a-z][a-z0-9+.-]*:|\/\/|#|\{\{|\$\{|<%)/i;

/** UTF-8 byte length. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** True when the text looks like an HTML document or fragment rather than Markdown, JSON, CSV... */
export function looksLikeHtml(text: string): boolean {
  const start = text.trimStart();
  if (DOCTYPE.test(start) || DOCUMENT_TAG.test(text)) return true;
  // A fragment: starts with a tag (or comment) and has at least one element.
  return /^<(?:!--|[a-z])/i.test(start) && ANY_TAG.test(start);
}

/** The document's <title>, if it has a non-empty one (entities for &, <, >, " and ' decoded). */
export function documentTitle(html: string): string | undefined {
  const match = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const raw = match?.[1]
    ?.replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;|&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

/** Text with comments and the bodies of script/style/template/textarea blanked, so only markup is scanned. */
function markupOnly(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/(<(script|textarea|template)\b[^>]*>)[\s\S]*?(<\/\2\s*>)/gi, '$1$3');
}

/** References to files beside the document: relative src, href, srcset, poster, CSS url() and @import. */
export function relativeReferences(html: string): string[] {
  const markup = markupOnly(html);
  // A <base href="https://..."> makes relative URLs resolve against it: then they are not local files.
  const base = /<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)/i.exec(markup)?.[1];
  if (base !== undefined && SAFE_REFERENCE.test(base) && !base.startsWith('#')) return [];
  const found = new Set<string>();
  const consider = (value: string | undefined) => {
    const ref = value?.trim();
    if (ref === undefined || ref === '' || SAFE_REFERENCE.test(ref)) return;
    found.add(ref);
  };
  const attributes = /<[a-z][a-z0-9-]*\b[^>]*>/gi;
  for (const tag of markup.matchAll(attributes)) {
    const text = tag[0];
    for (const attr of text.matchAll(/\s(src|href|poster|data|action)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi)) {
      const name = (attr[1] ?? '').toLowerCase();
      const value = attr[2] ?? attr[3] ?? attr[4];
      // <a href>, <form action> to a relative page are also broken links in a standalone drop.
      if (name === 'action' && (value ?? '').trim() === '') continue;
      consider(value);
    }
    for (const attr of text.matchAll(/\ssrcset\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
      for (const candidate of (attr[1] ?? attr[2] ?? '').split(',')) consider(candidate.trim().split(/\s+/)[0]);
    }
  }
  // CSS in <style> blocks and style="" attributes.
  for (const url of html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]+))\s*\)/gi)) {
    consider(url[1] ?? url[2] ?? url[3]);
  }
  for (const imp of html.matchAll(/@import\s+(?:"([^"]+)"|'([^']+)')/gi)) consider(imp[1] ?? imp[2]);
  return [...found];
}

/** The warnings for a document about to be uploaded (empty when nothing looks wrong). */
export function checkHtml(html: string, options: CheckOptions = {}): HtmlWarning[] {
  const maxBytes = options.maxBytes ?? MAX_HTML_BYTES;
  const warnings: HtmlWarning[] = [];
  if (!DOCTYPE.test(html.replace(/^\uFEFF/, ''))) {
    warnings.push({
      code: 'missing_doctype',
      message:
        'The document does not start with <!doctype html>: browsers will render it in quirks mode. Add <!doctype html> as the first line.',
    });
  }
  if (!DOCUMENT_TAG.test(html)) {
    warnings.push({
      code: 'fragment',
      message: 'The document has no <html>, <head> or <body>: it is a fragment, not a complete document.',
    });
  }
  const refs = relativeReferences(html);
  if (refs.length > 0) {
    const named = refs.slice(0, MAX_NAMED).join(', ');
    const more = refs.length > MAX_NAMED ? ` and ${refs.length - MAX_NAMED} more` : '';
    warnings.push({
      code: 'relative_reference',
      message: `${refs.length} relative reference(s) will not load, because only this one file is uploaded: ${named}${more}. Inline them (data: URLs, <style>, <script>) or use absolute https:// URLs.`,
      references: refs,
    });
  }
  const bytes = byteLength(html);
  if (bytes > maxBytes * NEAR_LIMIT && bytes <= maxBytes) {
    warnings.push({
      code: 'size_near_limit',
      message: `The document is ${bytes} bytes, ${Math.round((bytes / maxBytes) * 100)}% of the ${maxBytes}-byte limit.`,
    });
  }
  return warnings;
}

/**
 * Refuses what cannot be a drop before it is sent: a document over the size limit (`html_too_large`) and, unless
 * `force`, text that does not look like HTML at all (`not_html`).
 */
export function assertPublishable(html: string, options: CheckOptions & { force?: boolean; name?: string } = {}): void {
  const maxBytes = options.maxBytes ?? MAX_HTML_BYTES;
  const name = options.name ?? 'The document';
  const bytes = byteLength(html);
  if (bytes > maxBytes) {
    throw new HtmlDropError('html_too_large', `${name} is ${bytes} bytes: the HTML exceeds ${maxBytes} bytes.`, {
      details: { max_bytes: maxBytes, size_bytes: bytes },
    });
  }
  if (options.force !== true && !looksLikeHtml(html)) {
    throw new HtmlDropError(
      'not_html',
      `${name} does not look like HTML (no <!doctype html>, <html>, <head>, <body> or leading tag). A drop must be a complete, standalone HTML document.`,
    );
  }
}
