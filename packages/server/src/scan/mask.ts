/**
 * Turning a match into what may be shown of it (docs/api.md, "A look before publishing"): its line, and an excerpt
 * that keeps at most its first and last 4 characters, and never more than a quarter of it on each side, so at least
 * half of any match stays hidden. Nothing here keeps or logs the match itself.
 */

/** What a rule found: where in the text (UTF-16 offsets, end exclusive), under which rule and kind. */
export interface Match {
  readonly start: number;
  readonly end: number;
  readonly rule: string;
  readonly kind: 'secret' | 'personal_data';
  /** For a list (of addresses, of phone numbers): how many distinct ones the text holds. */
  readonly count?: number;
}

/** The longest excerpt answered, in characters, whatever the length of the match. */
const MAX_EXCERPT_CHARS = 24;

/** `sk_l…Q7xZ`: the ends of `secret`, each at most 4 characters and a quarter of it, the middle replaced. */
export function maskExcerpt(secret: string): string {
  const chars = [...secret.replace(/\s+/g, ' ')];
  const keep = Math.min(4, Math.floor(chars.length / 4));
  if (keep === 0) return '*'.repeat(Math.min(chars.length, 8));
  const hidden = Math.max(1, Math.min(chars.length - 2 * keep, MAX_EXCERPT_CHARS - 2 * keep));
  return `${chars.slice(0, keep).join('')}${'*'.repeat(hidden)}${chars.slice(chars.length - keep).join('')}`;
}

/** Line numbers (from 1) of offsets in one text, computed once per text that has findings. */
export function createLineIndex(text: string): (offset: number) => number {
  const starts: number[] = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };
}
