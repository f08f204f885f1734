/**
 * `fetch` that reaches `*.localhost` names as browsers do. RFC 6761 (section 6.3) makes every name under `localhost`
 * the loopback host, and browsers resolve them so; Node's resolver (getaddrinfo with glibc's files and dns) knows only
 * `localhost` itself, so a drop's own origin on a local service (`http://<label>.localhost:8787/`, the API's
 * `content_url`) and a `--server` under `.localhost` failed with ENOTFOUND. For those names only, the request goes
 * over `node:http`/`node:https` with a `lookup` that resolves the name as `localhost` (the same addresses, IPv4 or
 * IPv6, that `localhost` has on this machine); the `Host` header, TLS name and everything else stay the URL's. Every
 * other URL goes to the global fetch unchanged. Zero dependencies: Node's global fetch offers no `lookup` hook.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';

/** Whether a host name is a name under `localhost` (`abc.localhost`, any case, with or without the final dot). */
export function isUnderLocalhost(hostname: string): boolean {
  return /\.localhost\.?$/i.test(hostname);
}

/** Resolves any name as `localhost` resolves (RFC 6761, 6.3). */
const lookupAsLocalhost: LookupFunction = (_hostname, options, callback) => dns.lookup('localhost', options, callback);

/** Statuses whose answer has no body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** As the Fetch standard: at most 20 redirects. */
const MAX_REDIRECTS = 20;

/** A request body as node:http can write it: what the SDK sends (strings) and the common byte forms. */
function bodyBytes(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('A request to a *.localhost address takes a string or bytes as its body.');
}

interface Sent {
  readonly method: string;
  readonly headers: Headers;
  readonly body: Buffer | undefined;
  readonly signal: AbortSignal | undefined;
  readonly redirect: NonNullable<RequestInit['redirect']>;
}

/** One request over node:http(s), as fetch would answer it: a Response, or a TypeError whose cause says why. */
function send(url: URL, sent: Sent): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (sent.signal?.aborted === true) {
      reject(sent.signal.reason);
      return;
    }
    const headers: Record<string, string> = {};
    sent.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // fetch answers decoded bodies; asking for none keeps this path from having to decode.
    delete headers['accept-encoding'];
    if (sent.body !== undefined) headers['content-length'] = String(sent.body.length);
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: sent.method,
      headers,
      lookup: lookupAsLocalhost,
    });
    const onAbort = () => request.destroy(sent.signal?.reason);
    sent.signal?.addEventListener('abort', onAbort, { once: true });
    request.once('error', (error) => {
      sent.signal?.removeEventListener('abort', onAbort);
      reject(sent.signal?.aborted === true ? sent.signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    request.once('response', (answer) => {
      sent.signal?.removeEventListener('abort', onAbort);
      const status = answer.statusCode ?? 0;
      const responseHeaders = new Headers();
      for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
        responseHeaders.append(answer.rawHeaders[i] ?? '', answer.rawHeaders[i + 1] ?? '');
      }
      const empty = NULL_BODY.has(status) || sent.method === 'HEAD';
      if (empty) answer.resume();
      const body = empty ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
      const response = new Response(body, { status, statusText: answer.statusMessage ?? '', headers: responseHeaders });
      Object.defineProperty(response, 'url', { value: url.href });
      resolve(response);
    });
    request.end(sent.body);
  });
}

/** The request a redirect makes (the Fetch standard: 303, and 301/302 after a POST, become a GET without body). */
function redirected(sent: Sent, status: number): Sent {
  if (status === 303 || ((status === 301 || status === 302) && sent.method === 'POST')) {
    const headers = new Headers(sent.headers);
    for (const name of ['content-type', 'content-length']) headers.delete(name);
    return { ...sent, method: sent.method === 'HEAD' ? 'HEAD' : 'GET', headers, body: undefined };
  }
  return sent;
}

/**
 * A fetch that reaches `*.localhost` names (see the file's comment) and hands every other URL to `fallback()` (the
 * global fetch, looked up at each call). Takes what the SDK passes: a URL or string, and init with method, headers,
 * a string or bytes body, signal and redirect.
 */
export function createLocalhostFetch(fallback: () => typeof fetch = () => globalThis.fetch): typeof fetch {
  const localhostFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) return fallback()(input, init);
    let url = new URL(input);
    if (!isUnderLocalhost(url.hostname)) return fallback()(url, init);
    let sent: Sent = {
      method: (init.method ?? 'GET').toUpperCase(),
      headers: new Headers(init.headers),
      body: bodyBytes(init.body),
      signal: init.signal ?? undefined,
      redirect: init.redirect ?? 'follow',
    };
    for (let redirects = 0; ; redirects += 1) {
      const response = await send(url, sent);
      const location = response.headers.get('location');
      if (sent.redirect === 'manual' || !REDIRECTS.has(response.status) || location === null) return response;
      await response.body?.cancel();
      if (sent.redirect === 'error' || redirects >= MAX_REDIRECTS) {
        throw new TypeError('fetch failed', {
          cause: new Error(`redirect refused (${response.status} to ${location})`),
        });
      }
      sent = redirected(sent, response.status);
      url = new URL(location, url);
      if (!isUnderLocalhost(url.hostname)) {
        const { method, headers, body, signal, redirect } = sent;
        return fallback()(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: signal ?? null,
          redirect,
        });
      }
    }
  };
  return localhostFetch as typeof fetch;
}

/** The global fetch, reaching `*.localhost` names as browsers do: the SDK's default. */
export const localhostFetch: typeof fetch = createLocalhostFetch();
