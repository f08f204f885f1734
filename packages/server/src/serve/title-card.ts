/**
 * The title card (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md): a 1200x630 PNG
 * of a version drawn without a browser, from an SVG built here and rasterised by resvg (`@resvg/resvg-js`, loaded on
 * the first card, on libuv's thread pool), with DejaVu Sans shipped in the package (`assets/fonts/`, the Bitstream
 * Vera licence beside it). It stands in for the screenshot until one is ready, or for good without a browser; a
 * drop the visitor cannot open gets the generic "protected drop" card, which names nothing of it.
 *
 * A card is a pure function of what it shows, so finished cards are kept by that (a bounded map), and their ETag is
 * the hash of it: a changed title is a new card.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../built-files.js';

export const CARD_WIDTH = 1200;
export const CARD_HEIGHT = 630;

/** What a card shows: a version's, or the protected drop's (nothing of the drop). */
export type CardModel =
  | {
      readonly kind: 'version';
      readonly title: string;
      /** '' when none. */
      readonly description: string;
      readonly version: number;
      /** The service's host, e.g. `drop.example.com`, shown as its name. */
      readonly service: string;
    }
  | { readonly kind: 'protected'; readonly service: string };

/** A finished card: the PNG and its ETag. */
export interface Card {
  readonly png: Buffer;
  readonly etag: string;
}

const FONT_FAMILY = 'DejaVu Sans';

/** Cards kept, by their model: a few hundred of about 40 KB each. */
const MAX_KEPT = 256;

type Resvg = typeof import('@resvg/resvg-js');
let resvg: Promise<Resvg> | undefined;

/** resvg, imported on the first card (not at start-up: test/startup-imports.test.ts). */
function loadResvg(): Promise<Resvg> {
  resvg ??= import('@resvg/resvg-js').catch((error: unknown) => {
    resvg = undefined;
    throw error;
  });
  return resvg;
}

const fontFiles = (): string[] =>
  ['assets/fonts/DejaVuSans.ttf', 'assets/fonts/DejaVuSans-Bold.ttf'].map((f) => fileURLToPath(packageFile(f)));

const escapeXml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);

/**
 * The width of a character in ems, roughly as DejaVu Sans draws it: enough to wrap lines that stay inside the card
 * (an overestimate wraps a little early, never spills).
 */
function charWidth(c: string, bold: boolean): number {
  const code = c.codePointAt(0) ?? 0;
  let width: number;
  if (code >= 0x1100 && (code <= 0x115f || (code >= 0x2e80 && code <= 0xffdc) || code >= 0x1f300)) width = 1;
  else if (" .,:;!|il'`".includes(c)) width = 0.32;
  else if ('fjrtI()[]{}-'.includes(c)) width = 0.42;
  else if ('mwMW@%'.includes(c)) width = 0.95;
  else if (c >= 'A' && c <= 'Z') width = 0.72;
  else width = 0.62;
  return bold ? width * 1.15 : width;
}

/**
 * Splits `text` into at most `maxLines` lines of at most `maxWidth` pixels at `size`, breaking at spaces (inside a
 * word longer than a line when it must); the last line ends with an ellipsis when text is left over.
 */
export function wrapText(text: string, size: number, maxWidth: number, maxLines: number, bold = false): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  const widthOf = (s: string) => [...s].reduce((sum, c) => sum + charWidth(c, bold) * size, 0);
  const lines: string[] = [];
  let line = '';
  let rest = words;
  while (rest.length > 0 && lines.length < maxLines) {
    const [word, ...after] = rest as [string, ...string[]];
    const tried = line === '' ? word : `${line} ${word}`;
    if (widthOf(tried) <= maxWidth) {
      line = tried;
      rest = after;
      continue;
    }
    if (line !== '') {
      lines.push(line);
      line = '';
      continue;
    }
    // One word wider than a line: cut it where it stops fitting.
    const chars = [...word];
    let cut = 1;
    while (cut < chars.length && widthOf(chars.slice(0, cut + 1).join('')) <= maxWidth) cut += 1;
    lines.push(chars.slice(0, cut).join(''));
    rest = [chars.slice(cut).join(''), ...after].filter(Boolean);
  }
  if (line !== '' && lines.length < maxLines) {
    lines.push(line);
    line = '';
  }
  if (rest.length > 0 || line !== '') {
    const last = lines.pop() ?? '';
    let chars = [...last];
    while (chars.length > 0 && widthOf(`${chars.join('')}…`) > maxWidth) chars = chars.slice(0, -1);
    lines.push(`${chars.join('').trimEnd()}…`);
  }
  return lines;
}

const text = (x: number, y: number, size: number, fill: string, content: string, bold = false) =>
  `<text x="${x}" y="${y}" font-family="${FONT_FAMILY}" font-size="${size}"${bold ? ' font-weight="bold"' : ''} fill="${fill}">${escapeXml(content)}</text>`;

/** The card's SVG (exported for tests): dark, with the service's name, the title, the description and the version. */
export function cardSvg(model: CardModel): string {
  const left = 80;
  const width = CARD_WIDTH - 2 * left;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CARD_WIDTH}" height="${CARD_HEIGHT}" viewBox="0 0 ${CARD_WIDTH} ${CARD_HEIGHT}">`,
    `<rect width="${CARD_WIDTH}" height="${CARD_HEIGHT}" fill="#101828"/>`,
    `<rect width="${CARD_WIDTH}" height="10" fill="#4f7cff"/>`,
    `<rect x="${left}" y="72" width="28" height="28" rx="6" fill="#4f7cff"/>`,
    text(left + 44, 96, 28, '#c9d3e3', model.service, true),
  ];
  if (model.kind === 'protected') {
    parts.push(
      `<rect x="${left}" y="230" width="64" height="52" rx="8" fill="none" stroke="#c9d3e3" stroke-width="6"/>`,
      `<path d="M${left + 12} 230 v-18 a20 20 0 0 1 40 0 v18" fill="none" stroke="#c9d3e3" stroke-width="6"/>`,
      text(left, 380, 72, '#ffffff', 'Protected drop', true),
      text(left, 440, 32, '#c9d3e3', 'Only those who may open it see what it shows.'),
    );
  } else {
    const titleLines = wrapText(model.title, 64, width, 2, true);
    let y = 220;
    for (const line of titleLines) {
      parts.push(text(left, y, 64, '#ffffff', line, true));
      y += 78;
    }
    y += 10;
    for (const line of wrapText(model.description, 32, width, 3)) {
      parts.push(text(left, y, 32, '#c9d3e3', line));
      y += 44;
    }
    parts.push(
      `<rect x="${left}" y="${CARD_HEIGHT - 110}" width="112" height="48" rx="24" fill="#1f2b45"/>`,
      text(left + 24, CARD_HEIGHT - 76, 28, '#ffffff', `v${model.version}`, true),
    );
  }
  parts.push('</svg>');
  return parts.join('');
}

const keyOf = (model: CardModel): string =>
  createHash('sha256')
    .update(
      JSON.stringify(
        model.kind === 'protected'
          ? [model.kind, model.service]
          : [model.kind, model.service, model.title, model.description, model.version],
      ),
    )
    .digest('base64url')
    .slice(0, 27);

/** Draws cards, keeping the last few hundred; concurrent requests for one card share its drawing. */
export interface TitleCards {
  card(model: CardModel): Promise<Card>;
}

export function createTitleCards(): TitleCards {
  const kept = new Map<string, Promise<Card>>();
  return {
    card(model) {
      const key = keyOf(model);
      const found = kept.get(key);
      if (found !== undefined) {
        // Most recently used last: the map's order is the eviction order.
        kept.delete(key);
        kept.set(key, found);
        return found;
      }
      const drawing = loadResvg()
        .then(({ renderAsync }) =>
          renderAsync(cardSvg(model), {
            font: { loadSystemFonts: false, fontFiles: fontFiles(), defaultFontFamily: FONT_FAMILY },
            fitTo: { mode: 'original' },
          }),
        )
        .then((image) => ({ png: image.asPng(), etag: `"card-${key}"` }));
      drawing.catch(() => kept.delete(key));
      kept.set(key, drawing);
      if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
      return drawing;
    },
  };
}
