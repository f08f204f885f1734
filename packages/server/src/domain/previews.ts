/**
 * Previews and embeds (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md): who sees a
 * version's preview image, its oEmbed answer and its embed, asked of the viewer's one access decision
 * (public-view.ts), so that every rule of who may see a drop holds here as it does in the viewer. A visitor who
 * cannot open the drop gets the generic "protected drop" card: not its title, not whether a version exists.
 */
import { findViewerPage, type PublicViewDeps, type VisitorAccess } from './public-view.js';
import type { DropRecord, VersionRecord } from './types.js';

/** What a visitor of a preview, an oEmbed answer or an embed may see of `/p/<slug>[?v=<n>]`. */
export type PreviewAccess =
  /** No such drop or version, or expired: the code its answer carries. */
  | { readonly kind: 'refused'; readonly code: 'not_found' | 'expired' | 'version_not_found' }
  /** The drop exists and this visitor may not open it (locked, or any rule of the viewer that hides it). */
  | { readonly kind: 'protected' }
  | { readonly kind: 'visible'; readonly drop: DropRecord; readonly shown: VersionRecord };

/**
 * The viewer's decision for `/p/<slug>[?v=<n>]` (`requested`: a number, undefined for the latest, null for a `?v=`
 * naming no possible version), read as what a preview may show.
 */
export async function findPreviewAccess(
  deps: PublicViewDeps,
  slug: string,
  requested: number | null | undefined,
  access: VisitorAccess,
): Promise<PreviewAccess> {
  const page = await findViewerPage(deps, slug, requested, access, () => 'raw');
  switch (page.kind) {
    case 'visible':
      return { kind: 'visible', drop: page.drop, shown: page.shown };
    case 'not_found':
    case 'expired':
    case 'version_not_found':
      return { kind: 'refused', code: page.kind };
    default:
      // Locked, and whatever else the viewer answers without the drop: nothing of it is shown.
      return { kind: 'protected' };
  }
}
