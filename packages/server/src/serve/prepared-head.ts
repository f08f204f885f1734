/**
 * A cached answer's head handed to node:http as finished text (docs/decisions/0046-prepared-response-heads.md).
 *
 * Why: `writeHead(200, list)` rebuilds the same head for every request. node:http checks each name and value with two
 * regular expressions, lowercases each name to find the ones it manages, and concatenates the lines. For a file's
 * seven headers that was about 5,600 of the roughly 62,000 instructions a bare server spends per request (callgrind,
 * bench/README.md, "Files"). An answer's headers never change, so they are checked and joined once, when the answer
 * is built (prepareHead), and a request adds only what node adds itself: `Date` and the connection lines.
 *
 * How: node:http keeps a response's head in `response._header` from `writeHead` until the first write sends it. That
 * field is not a public API. The module therefore checks once, at first use, that this Node builds a head exactly as
 * it does here (headCheck), and writes a prepared head only for the responses whose connection lines it knows: a
 * plain 200 on a connection that stays open. Anything else (the check failed on another Node version, a client that
 * closes, a response with headers already set, a response whose `writeHead` was replaced, as an injected request's
 * is) returns false, and the caller uses `writeHead` as before.
 */
import { type IncomingMessage, ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';

/** A 200's status line and header lines, ending in CRLF, without the lines node adds (Date, Connection). */
export type PreparedHead = string & { readonly __prepared: unique symbol };

const STATUS_LINE = 'HTTP/1.1 200 OK\r\n';

/**
 * The headers node:http decides from (a head that set one would need its logic): a prepared head carries none of
 * them but Content-Length, which it must carry, or node would add one or chunk the body.
 */
const MANAGED = new Set(['connection', 'date', 'transfer-encoding', 'keep-alive', 'trailer', 'expect']);

/**
 * Checks a flat [name, value, ...] list as node:http would (it throws on the same input) and joins it once. Throws
 * too for a list without Content-Length or with a header node:http manages.
 */
export function prepareHead(headers: readonly string[]): PreparedHead {
  const lines = [STATUS_LINE];
  let length = false;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] as string;
    const value = headers[i + 1] as string;
    validateHeaderName(name);
    validateHeaderValue(name, value);
    const lower = name.toLowerCase();
    if (MANAGED.has(lower)) throw new Error(`a prepared head cannot carry ${name}`);
    length ||= lower === 'content-length';
    lines.push(`${name}: ${value}\r\n`);
  }
  if (!length) throw new Error('a prepared head needs Content-Length');
  // join, not `+=`: join makes one flat string, where `+=` makes a tree of pieces that every request's head, built on
  // it, would walk again when the socket write flattens it (about 1 µs of a 16 µs request: perf, bench/README.md).
  return lines.join('') as PreparedHead;
}

/** node:http's fields of a response that decide its connection lines (set by the server for each request). */
interface NodeResponseState {
  _header: string | null;
  _headerSent: boolean;
  _keepAliveTimeout?: number;
  _defaultKeepAlive?: boolean;
  _maxRequestsPerSocket?: number;
  _removedConnection?: boolean;
  _expect_continue?: boolean;
  _sent100?: boolean;
  maxRequestsOnConnectionReached?: boolean;
}

/** `Date: …` for the current second, made once a second (node:http caches its own the same way). */
let dateSecond = -1;
let dateLine = '';
function currentDateLine(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
  return dateLine;
}

/** The connection lines of a kept-alive response, by its server's keep-alive settings (the last pair seen). */
let keptFor: { timeout: number; max: number; lines: string } = { timeout: -1, max: -1, lines: '' };
function keepAliveLines(state: NodeResponseState): string {
  const timeout = state._defaultKeepAlive === false ? 0 : (state._keepAliveTimeout ?? 0);
  const max = state._maxRequestsPerSocket ?? 0;
  if (keptFor.timeout !== timeout || keptFor.max !== max) {
    const keepAlive =
      timeout > 0 ? `Keep-Alive: timeout=${Math.floor(timeout / 1000)}${max > 0 ? `, max=${max}` : ''}\r\n` : '';
    keptFor = { timeout, max, lines: `Connection: keep-alive\r\n${keepAlive}` };
  }
  return keptFor.lines;
}

/**
 * Whether this Node builds a head as writePreparedHead does: a detached response is given a head by `writeHead` and
 * the text compared, with and without a Keep-Alive timeout. Run once; false turns the module off.
 */
export function headCheck(): boolean {
  const headers = ['content-type', 'image/png', 'x-check', '"1"', 'content-length', '5'];
  const prepared = prepareHead(headers);
  for (const [timeout, max] of [
    [65_000, 0],
    [5_000, 100],
    [0, 0],
  ] as const) {
    const request = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} } as IncomingMessage;
    const response = new ServerResponse(request);
    const state = response as unknown as NodeResponseState;
    state._keepAliveTimeout = timeout;
    state._maxRequestsPerSocket = max;
    if (!canPrepare(response, state)) return false;
    response.writeHead(200, headers);
    const built = state._header;
    if (typeof built !== 'string' || state._headerSent !== false) return false;
    // The Date line is node's own; the rest must match ours byte for byte.
    const date = /\r\nDate: [^\r\n]+\r\n/.exec(built)?.[0]?.slice(2);
    if (date === undefined) return false;
    if (built !== `${prepared}${date}${keepAliveLines(state)}\r\n`) return false;
  }
  return true;
}

let supported: boolean | undefined;
const NODE_WRITE_HEAD = ServerResponse.prototype.writeHead;

/** What node:http would do differently from a plain kept-alive 200: then the caller uses writeHead. */
function canPrepare(response: ServerResponse, state: NodeResponseState): boolean {
  return (
    // A response whose writeHead is someone else's (an injected request's, a wrapper watching heads) gets its call.
    response.writeHead === NODE_WRITE_HEAD &&
    response.shouldKeepAlive &&
    response.sendDate &&
    response.statusCode === 200 &&
    !response.statusMessage &&
    !response.chunkedEncoding &&
    state._header === null &&
    state.maxRequestsOnConnectionReached !== true &&
    state._removedConnection !== true &&
    !(state._expect_continue === true && state._sent100 !== true) &&
    response.getHeaderNames().length === 0
  );
}

/**
 * Gives `response` the prepared head of a 200 (the `end` that follows sends it with the body, in one write, as
 * after `writeHead`). False when it did nothing: the caller writes the head with `writeHead`.
 */
export function writePreparedHead(response: ServerResponse, head: PreparedHead): boolean {
  supported ??= headCheck();
  const state = response as unknown as NodeResponseState;
  if (!supported || !canPrepare(response, state)) return false;
  state._header = `${head}${currentDateLine(Date.now())}${keepAliveLines(state)}\r\n`;
  state._headerSent = false;
  return true;
}
