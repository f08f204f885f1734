/**
 * One webhook attempt over the network (docs/api.md, "Webhooks"): a POST signed as Standard Webhooks with the
 * maintained `standardwebhooks` library (loaded on the first delivery, not at start-up), to an address checked after
 * DNS resolution: the connection is made to the very address that was checked (node's `lookup` hook), so a name that
 * resolves to a public address at the check cannot reach a private one at the connection. No redirect is followed,
 * and an attempt ends after 10 s.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, literalAddress } from '../domain/webhook-targets.js';
import { type Resolve, WEBHOOK_TIMEOUT_MS, type WebhookSender } from '../domain/webhooks.js';

type WebhookClass = typeof import('standardwebhooks').Webhook;
let loaded: Promise<WebhookClass> | undefined;
const webhookClass = () => {
  // A CommonJS package: its exports are the namespace's own, or its default's once bundled.
  loaded ??= import('standardwebhooks').then(
    (m) => m.Webhook ?? (m as unknown as { default: { Webhook: WebhookClass } }).default.Webhook,
  );
  return loaded;
};

export interface SenderOptions {
  readonly allowPrivate: boolean;
  readonly resolve: Resolve;
  readonly timeoutMs?: number;
  /** `User-Agent` of the requests. */
  readonly userAgent?: string;
}

export function createWebhookSender(options: SenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // Resolves the name, refuses it when any address is not public, and connects to the first address.
  const lookup: LookupFunction = (hostname, _options, callback) => {
    options.resolve(hostname).then(
      (addresses) => {
        const first = addresses[0];
        const inner = addresses.find((a) => !isPublicAddress(a));
        if (first === undefined) callback(new Error(`${hostname} does not resolve`), '', 4);
        else if (!options.allowPrivate && inner !== undefined) {
          callback(new Error(`${hostname} resolves to ${inner}, which is not a public address`), '', 4);
        } else callback(null, first, first.includes(':') ? 6 : 4);
      },
      (error: Error) => callback(error, '', 4),
    );
  };
  return {
    async deliver({ url, id, timestampSeconds, body, secret }) {
      const target = new URL(url);
      const literal = literalAddress(target.hostname);
      if (literal !== undefined && !options.allowPrivate && !isPublicAddress(literal)) {
        return { error: `${literal} is not a public address` };
      }
      const Webhook = await webhookClass();
      const signature = new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
      const client = target.protocol === 'https:' ? https : http;
      return new Promise((resolve) => {
        let settled = false;
        const done = (result: { status?: number; error?: string }) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const request = client.request(
          target,
          {
            method: 'POST',
            lookup,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'user-agent': options.userAgent ?? 'htmldrop-webhooks',
              'webhook-id': id,
              'webhook-timestamp': String(timestampSeconds),
              'webhook-signature': signature,
            },
          },
          (response) => {
            // The answer's body is not needed: read and dropped, so the socket is freed.
            response.resume();
            response.on('end', () => done({ status: response.statusCode ?? 0 }));
            response.on('error', (error) => done({ error: error.message }));
          },
        );
        const timer = setTimeout(() => {
          request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        request.on('error', (error) => done({ error: error.message }));
        request.end(body);
      });
    },
  };
}
