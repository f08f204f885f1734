/**
 * A version's preview image (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md): its
 * screenshot when one is stored, else its title card (title-card.ts), and, when a browser is configured, a
 * screenshot asked of the queue (screenshots.ts) for next time: never made on the request's path.
 */
import type { PreviewStore } from '../domain/store.js';
import type { DropRecord } from '../domain/types.js';
import { createTitleCards, type TitleCards } from './title-card.js';

/** An image answer: the PNG, its ETag, and whether it is the rendered page or a card. */
export interface PreviewImage {
  readonly png: Uint8Array;
  readonly etag: string;
  readonly kind: 'screenshot' | 'card';
}

/** Where screenshots are asked for (screenshots.ts); absent when no browser is configured. */
export interface ScreenshotRequests {
  /** Asks for a screenshot of this version (the latest when undefined), if it has none: returns at once. */
  request(slug: string, version?: number): void;
}

export interface Previews {
  /** The image of a version the visitor may see. */
  imageOf(drop: DropRecord, shown: { readonly version: number }): Promise<PreviewImage>;
  /** The generic card of a drop the visitor may not open: nothing of the drop on it. */
  protectedCard(): Promise<PreviewImage>;
}

export interface PreviewOptions {
  readonly store: PreviewStore;
  /** `{base_url}`: its host is the service's name on the cards. */
  readonly baseUrl: string;
  readonly screenshots?: ScreenshotRequests | undefined;
  readonly cards?: TitleCards;
}

export function createPreviews(options: PreviewOptions): Previews {
  const { store, screenshots } = options;
  const cards = options.cards ?? createTitleCards();
  const service = new URL(options.baseUrl).host;
  const asCard = async (model: Parameters<TitleCards['card']>[0]): Promise<PreviewImage> => {
    const { png, etag } = await cards.card(model);
    return { png, etag, kind: 'card' };
  };
  return {
    async imageOf(drop, shown) {
      const stored = await store.findPreview(drop.slug, shown.version);
      if (stored !== undefined) {
        return { png: stored.png, etag: `"shot-${stored.sha256.slice(0, 32)}"`, kind: 'screenshot' };
      }
      // Not made yet (queue full at the write, a restart, a failure): asked for now, the card meanwhile.
      screenshots?.request(drop.slug, shown.version);
      const { title, description } = drop;
      return asCard({ kind: 'version', title, description: description ?? '', version: shown.version, service });
    },
    protectedCard: () => asCard({ kind: 'protected', service }),
  };
}
