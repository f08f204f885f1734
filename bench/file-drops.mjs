/**
 * What `bench:files` and `bench:instructions` share: drops that each carry one PNG-like file, published through the
 * API of the built service, the bare node:http server answering the same bytes, and wrk scripts that ask either for
 * a random drop's file.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, httpGet, mapLimit, serviceEnv, spawnManaged, waitForHttp } from './lib.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..');
export const SERVER_MAIN = path.join(ROOT, 'packages', 'server', 'dist', 'main.js');
const SERVER_CLI = path.join(ROOT, 'packages', 'server', 'dist', 'cli.js');
export const HOST = '127.0.0.1';

/**
 * Bytes of a PNG-like file: the PNG signature, then bytes that do not compress (as a PNG's do not), distinct per drop.
 * @param {number} index
 * @param {number} size
 */
export function pngBytes(index, size) {
  const bytes = Buffer.alloc(size);
  let x = (index + 1) * 2_654_435_761;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
  return bytes;
}

/** The bare server: the files preloaded in a Map keyed by URL, two headers. Run as `node -e` in its own process. */
export const BASELINE = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const [dir, port] = process.argv.slice(1);
const bodies = new Map();
for (const name of fs.readdirSync(dir)) bodies.set('/f/' + name, fs.readFileSync(path.join(dir, name)));
const server = http.createServer((req, res) => {
  const body = bodies.get(req.url);
  if (body === undefined) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65000;
server.listen(Number(port), '${HOST}');
`;

/**
 * Starts the built service on a new SQLite data directory under `tmp`, publishes `drops` drops each with its own
 * `img/chart.png` of `fileBytes` bytes, and checks that both surfaces answer every file's bytes (which also loads them
 * into the raw cache). The service keeps running; `env` starts it again on the same data.
 * @param {string} tmp
 * @param {{ drops: number, fileBytes: number }} options
 */
export async function startFileService(tmp, { drops: count, fileBytes }) {
  const dataDir = path.join(tmp, 'data');
  mkdirSync(dataDir);
  const port = await freePort();
  const env = serviceEnv({ host: HOST, port, dataDir, contentOrigin: true });
  const baseUrl = env.HTMLDROP_BASE_URL ?? '';
  const managed = spawnManaged('htmldrop', process.execPath, [SERVER_MAIN], { cwd: ROOT, env });
  await waitForHttp(`${baseUrl}/llms.txt`, managed);
  const { stdout } = await promisify(execFile)(process.execPath, [SERVER_CLI, 'token', 'create', '--user', 'bench'], {
    cwd: ROOT,
    env,
  });
  const token = stdout.trim().split('\n').pop()?.trim() ?? '';
  const drops = await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const bytes = pngBytes(i, fileBytes);
      const res = await fetch(`${baseUrl}/api/drops`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          title: `Bench drop ${i}`,
          html: `<!doctype html><title>chart ${i}</title><img src="img/chart.png" alt="chart">`,
          files: { 'img/chart.png': { content: bytes.toString('base64'), encoding: 'base64' } },
        }),
      });
      const json = /** @type {{ slug: string, content_url: string }} */ (await res.json());
      if (res.status !== 201) throw new Error(`POST /api/drops #${i}: ${res.status} ${JSON.stringify(json)}`);
      return { slug: json.slug, host: new URL(json.content_url).host, bytes };
    },
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  await mapLimit(drops, 8, async ({ slug, host, bytes }) => {
    for (const [url, hostHeader] of [
      [`${baseUrl}/img/chart.png`, host],
      [`${baseUrl}/p/${slug}/raw/v/1/img/chart.png`, undefined],
    ]) {
      const res = await httpGet(/** @type {string} */ (url), agent, hostHeader);
      if (res.status !== 200 || !res.body.equals(bytes) || res.headers['content-type'] !== 'image/png') {
        throw new Error(`${url} (${hostHeader}): ${res.status} ${res.headers['content-type']} ${res.body.length} B`);
      }
    }
  });
  agent.destroy();
  return { baseUrl, port, env, managed, pid: managed.child.pid, drops };
}

/**
 * Writes each drop's bytes under `tmp/files/<slug>`, the bare server's folder (it answers `/f/<slug>`).
 * @param {string} tmp
 * @param {ReadonlyArray<{ slug: string, bytes: Buffer }>} drops
 */
export function writeBaselineFiles(tmp, drops) {
  const dir = path.join(tmp, 'files');
  mkdirSync(dir);
  for (const { slug, bytes } of drops) writeFileSync(path.join(dir, slug), bytes);
  return dir;
}

/**
 * The wrk scripts, each asking for a random drop's file (the same seed for all): on its own origin (`content`), in
 * the raw folder (`raw`), and on the bare server (`node`).
 * @param {string} tmp
 * @param {ReadonlyArray<{ slug: string, host: string }>} drops
 */
export function fileScripts(tmp, drops) {
  const seed = Date.now() % 2_147_483_647;
  const pick = `local n = #t\nmath.randomseed(${seed})\n`;
  /** @param {string} name @param {string[]} rows @param {string} format */
  const script = (name, rows, format) => {
    const file = path.join(tmp, `${name}.lua`);
    writeFileSync(file, `local t = {\n${rows.join('\n')}\n}\n${pick}request = function()\n  return ${format}\nend\n`);
    return file;
  };
  return {
    content: script(
      'content',
      drops.map((d) => `  { Host = "${d.host}" },`),
      'wrk.format(nil, "/img/chart.png", t[math.random(n)])',
    ),
    raw: script(
      'raw',
      drops.map((d) => `  "/p/${d.slug}/raw/v/1/img/chart.png",`),
      'wrk.format(nil, t[math.random(n)])',
    ),
    node: script(
      'node',
      drops.map((d) => `  "/f/${d.slug}",`),
      'wrk.format(nil, t[math.random(n)])',
    ),
  };
}
