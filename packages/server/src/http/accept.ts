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

/** How a media type matches an Accept header: the quality, specificity and position of its most specific range. */
interface Match {
  readonly q: number;
  /** 2 for `type/subtype`, 1 for `type/*`, 0 for `*\/*`, -1 for no match. */
  readonly specificity: number;
  /** Position of the range in the header. */
  readonly order: number;
}

function matchOf(ranges: readonly MediaRange[], mediaType: string): Match {
  const [type, subtype] = mediaType.split('/');
  let match: Match = { q: 0, specificity: -1, order: ranges.length };
  ranges.forEach((range, order) => {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : 0;
    if (specificity === 0 && !(range.type === '*' && range.subtype === '*')) return;
    if (specificity > match.specificity) match = { q: range.q, specificity, order };
  });
  return match;
}

/**
 * The quality the Accept header gives a media type: that of the most specific matching range (`text/html` over
 * `text/*` over `*\/*`), 0 when none matches. No header accepts anything (quality 1).
 */
export function acceptQuality(accept: string | undefined, mediaType: string): number {
  if (accept === undefined || accept.trim() === '') return 1;
  return matchOf(parseAccept(accept), mediaType).q;
}

/**
 * The offer the client prefers (RFC 9110, section 12.5.1): the highest quality; on a tie the offer matched by the
 * more specific range (`text/html,*\/*` prefers `text/html` to `application/json`), then by the earlier range, then
 * the earlier offer. Undefined when the header accepts none of them. No header: the first offer.
 */
export function preferredType(accept: string | undefined, offers: readonly string[]): string | undefined {
  if (accept === undefined || accept.trim() === '') return offers[0];
  const ranges = parseAccept(accept);
  let best: { offer: string; match: Match } | undefined;
  for (const offer of offers) {
    const match = matchOf(ranges, offer);
    if (match.q <= 0) continue;
    const better =
      best === undefined ||
      match.q > best.match.q ||
      (match.q === best.match.q &&
        (match.specificity > best.match.specificity ||
          (match.specificity === best.match.specificity && match.order < best.match.order)));
    if (better) best = { offer, match };
  }
  return best?.offer;
}

/**
 * True when the client prefers an HTML page to JSON: a browser navigating (`text/html,…,*\/*;q=0.8`, or
 * `text/html,*\/*`), not curl (`*\/*`) or a client that sends no Accept (both get JSON).
 */
export function prefersHtml(accept: string | undefined): boolean {
  return preferredType(accept, ['application/json', 'text/html']) === 'text/html';
}

/** True when the Accept header names JSON (spec 4.2: `GET /api/onboard` answers JSON with Accept: application/json). */
export function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && /\bapplication\/json\b/i.test(accept);
}
