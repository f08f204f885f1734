/** Content negotiation on the Accept header (RFC 9110, section 12.5.1), for the few choices the service makes. */

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';');
    const [type = '', subtype = ''] = range.trim().toLowerCase().split('/');
    if (type === '' || subtype === '') continue;
    let q = 1;
    for (const param of params) {
      const [name = '', value = ''] = param.split('=');
      if (name.trim().toLowerCase() === 'q') {
        const parsed = Number(value.trim());
        q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 0;
      }
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/**
 * The quality the Accept header gives a media type: that of the most specific matching range (`text/html` over
 * `text/*` over `*\/*`), 0 when none matches. No header accepts anything (quality 1).
 */
export function acceptQuality(accept: string | undefined, mediaType: string): number {
  if (accept === undefined || accept.trim() === '') return 1;
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let quality = 0;
  for (const range of parseAccept(accept)) {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : 0;
    if (specificity === 0 && !(range.type === '*' && range.subtype === '*')) continue;
    if (specificity > best) {
      best = specificity;
      quality = range.q;
    }
  }
  return quality;
}

/**
 * True when the client prefers an HTML page to JSON: a browser navigating (`text/html,…,*\/*;q=0.8`), not curl
 * (`*\/*`) or a client that sends no Accept (both get JSON).
 */
export function prefersHtml(accept: string | undefined): boolean {
  const html = acceptQuality(accept, 'text/html');
  return html > 0 && html > acceptQuality(accept, 'application/json');
}

/** True when the Accept header names JSON (spec 4.2: `GET /api/onboard` answers JSON with Accept: application/json). */
export function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && /\bapplication\/json\b/i.test(accept);
}
