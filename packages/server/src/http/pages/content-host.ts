/**
 * The few pages a drop's own content host answers besides the drop (docs/api.md, "Each drop on its own origin").
 * They are shown inside the viewer's frame, on the drop's origin, so they link to the service in a new tab (the
 * frame may not navigate the viewer) and carry no script but the locked page's one line.
 */
import { escapeHtml, simplePage } from './layout.js';

const serviceLink = (serviceUrl: string) =>
  `<p><a href="${escapeHtml(serviceUrl)}/" target="_blank" rel="noopener noreferrer">Go to htmldrop</a></p>`;

export function contentNotFoundPage(serviceUrl: string): string {
  return simplePage(
    'Nothing here',
    `<p>This address serves one drop's document at <code>/</code> only, and there is no such drop or page here.</p>${serviceLink(serviceUrl)}`,
  );
}

export function contentExpiredPage(serviceUrl: string): string {
  return simplePage(
    'This drop has expired',
    `<p>Its owner set this link to stop working at a set time, and that time has passed.</p>${serviceLink(serviceUrl)}`,
  );
}

/** What the viewer listens for from a locked drop's frame: its ticket lapsed, so the viewer fetches a new one. */
export const FRAME_LOCKED_MESSAGE = 'htmldrop:locked';

/**
 * A locked drop on its own host without a valid ticket. Inside the viewer it tells the viewer (and only the
 * service's origin), which reloads with a fresh ticket; opened on its own it says where to enter the passcode.
 */
export function contentLockedPage(serviceUrl: string, serviceOrigin: string, nonce: string): string {
  const script = `<script nonce="${escapeHtml(nonce)}">if(parent!==self)parent.postMessage(${JSON.stringify(FRAME_LOCKED_MESSAGE)},${JSON.stringify(serviceOrigin).replace(/</g, '\\u003c')});</script>`;
  return simplePage(
    'Passcode required',
    `<p>This drop is protected by a passcode. Open it from its page on htmldrop and enter the passcode there.</p>${serviceLink(serviceUrl)}`,
    script,
  );
}
