/**
 * `npm run bench:diff`: the version diff (docs/api.md, "Version history: diff"; decision 0021) on two 2 MiB HTML
 * documents of several shapes. For each shape: the built domain function `diffTexts` in a fresh Node process (time and
 * peak RSS above the process with both documents loaded), GNU `diff -u` on the same two files as the baseline (time
 * and peak RSS of the whole process, through /usr/bin/time when present), their ratio, a check that the unified text
 * turns the first document into the second (GNU `patch`, when present), and the endpoint
 * `GET /api/drops/<slug>/diff` on the built service (loopback time; the service's RSS sampled during the requests).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  median,
  registerTempDir,
  sleep,
  spawnManaged,
  waitForHttp,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'packages/server/dist');
const REPEATS = intEnv('BENCH_REPEATS', 5, 1);
const MAX_BYTES = 2 * 1024 * 1024;

/** Deterministic pseudo-random 32-bit integers (mulberry32). */
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Table rows of about 70 characters up to just under 2 MiB: about 30,000 lines. */
function tableDocument(seed) {
  const next = random(seed);
  const lines = ['<!doctype html>', '<html lang="en"><head><title>Report</title></head><body><table>'];
  let size = lines.join('\n').length + 40;
  for (let i = 0; size < MAX_BYTES - 200; i++) {
    const line = `<tr><td>${i}</td><td>${(next() % 1e9).toString(36)}</td><td>row ${i} of the table</td></tr>`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('</table></body></html>');
  return lines;
}

/** The shapes: [name, from, to]. */
function shapes() {
  const base = tableDocument(1);
  const edit = (every) => base.map((line, i) => (i % every === 5 ? line.replace('row', 'ROW') : line));
  const longLine = `<p>${'lorem ipsum dolor sit amet '.repeat(77_000)}</p>`.slice(0, MAX_BYTES - 10);
  const middle = longLine.length >> 1;
  const short = (seed) => {
    const next = random(seed);
    return Array.from({ length: MAX_BYTES / 2 }, () => 'abc'[next() % 3]).join('\n');
  };
  const cells = (order) => [...order].map((c) => `<td>${c.repeat(15)}</td>\n`).join('');
  return [
    ['few changes (4 lines of 30k)', base.join('\n'), edit(10_000).join('\n')],
    ['scattered changes (every 100th line)', base.join('\n'), edit(100).join('\n')],
    ['scattered changes (every 10th line)', base.join('\n'), edit(10).join('\n')],
    ['completely different', base.join('\n'), tableDocument(2).join('\n')],
    ['one 2 MiB line each, 1 char changed', longLine, `${longLine.slice(0, middle)}X${longLine.slice(middle + 1)}`],
    ['1 Mi one-character lines, different', short(3), short(4)],
    ['repetitive: 3 lines repeated 28k times, reordered', cells('abc').repeat(27_900), cells('cba').repeat(27_900)],
  ];
}

/** Child mode: one diffTexts of the two files in `dir`, as JSON on stdout; writes the unified text to `out`. */
async function measureChild(dir, out) {
  const { diffTexts } = await import(pathToFileURL(path.join(DIST, 'domain/diff.js')).href);
  const from = readFileSync(path.join(dir, 'a.html'), 'utf8');
  const to = readFileSync(path.join(dir, 'b.html'), 'utf8');
  const rest = process.resourceUsage().maxRSS;
  const started = performance.now();
  const diff = diffTexts('a v1', 'b v2', from, to);
  const ms = performance.now() - started;
  const peak = process.resourceUsage().maxRSS;
  if (out !== '-') writeFileSync(out, diff.unified);
  const { exact, added, removed } = diff;
  console.log(
    JSON.stringify({ ms, peakAboveRestMB: (peak - rest) / 1024, exact, added, removed, bytes: diff.unified.length }),
  );
}

/** GNU diff -u: wall time, peak RSS (KB, via /usr/bin/time) and the +/- line counts. */
function gnuDiff(dir) {
  const files = [path.join(dir, 'a.html'), path.join(dir, 'b.html')];
  const timed = existsSync('/usr/bin/time');
  const command = timed ? '/usr/bin/time' : '/usr/bin/diff';
  const args = timed ? ['-f', '%M', '/usr/bin/diff', '-u', ...files] : ['-u', ...files];
  const started = performance.now();
  const run = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = performance.now() - started;
  const lines = run.stdout.split('\n').slice(2);
  const added = lines.filter((l) => l.startsWith('+')).length;
  const removed = lines.filter((l) => l.startsWith('-')).length;
  const peakMB = timed ? Number(run.stderr.trim().split('\n').at(-1)) / 1024 : Number.NaN;
  return { ms, peakMB, added, removed };
}

/** Whether GNU patch, given our unified text, turns a.html into b.html (null without patch). */
function applies(dir, unifiedFile) {
  if (!existsSync('/usr/bin/patch')) return null;
  const out = path.join(dir, 'patched.html');
  const run = spawnSync('/usr/bin/patch', ['-s', '-o', out, path.join(dir, 'a.html'), unifiedFile], {
    encoding: 'utf8',
  });
  return run.status === 0 && readFileSync(out).equals(readFileSync(path.join(dir, 'b.html')));
}

/** Peak VmRSS (MB) of a process while `work` runs, sampled every 5 ms. */
async function sampledRss(pid, work) {
  const read = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const rest = read();
  let peak = rest;
  const timer = setInterval(() => {
    peak = Math.max(peak, read());
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { rest, peak };
}

/** The service with one drop per shape (v1, v2); the endpoint's loopback time and the service's RSS per shape. */
async function measureEndpoint(cases) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-diff-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH, HTMLDROP_DATA_DIR: dataDir };
  const service = spawnManaged('htmldrop', process.execPath, [path.join(DIST, 'main.js')], {
    env: { ...env, PORT: String(port), HTMLDROP_BASE_URL: base, HTMLDROP_LOG_LEVEL: 'warn' },
  });
  await waitForHttp(`${base}/healthz`, service);
  const cli = [path.join(DIST, 'cli.js'), 'token', 'create', '--user', 'bench'];
  const token = execFileSync(process.execPath, cli, { env }).toString().trim();
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const results = [];
  for (const { from, to } of cases) {
    const created = await fetch(`${base}/api/drops`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'b', html: from }),
    });
    if (created.status !== 201) throw new Error(`create: HTTP ${created.status} ${await created.text()}`);
    const { slug } = await created.json();
    const put = await fetch(`${base}/api/drops/${slug}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ html: to }),
    });
    if (put.status !== 200) throw new Error(`put: HTTP ${put.status}`);
    await sleep(200);
    const times = [];
    const rss = await sampledRss(service.child.pid, async () => {
      for (let i = 0; i < REPEATS + 1; i++) {
        const started = performance.now();
        const answer = await fetch(`${base}/api/drops/${slug}/diff`, { headers });
        await answer.arrayBuffer();
        if (answer.status !== 200) throw new Error(`diff: HTTP ${answer.status}`);
        if (i > 0) times.push(performance.now() - started);
      }
    });
    results.push({ ms: median(times), rssAboveRestMB: rss.peak - rss.rest });
  }
  return results;
}

/** One shape measured REPEATS times each way; medians of times, maxima of memory. */
function measureShape(dir, name) {
  const node = [];
  const gnu = [];
  const unifiedFile = path.join(dir, 'ours.diff');
  for (let i = 0; i < REPEATS; i++) {
    const args = [fileURLToPath(import.meta.url), '--measure', dir, i === 0 ? unifiedFile : '-'];
    node.push(JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })));
    gnu.push(gnuDiff(dir));
  }
  const first = node[0];
  return {
    name,
    exact: first.exact,
    added: first.added,
    removed: first.removed,
    unifiedMB: first.bytes / 1024 / 1024,
    ms: median(node.map((r) => r.ms)),
    maxMs: Math.max(...node.map((r) => r.ms)),
    peakAboveRestMB: Math.max(...node.map((r) => r.peakAboveRestMB)),
    gnuMs: median(gnu.map((r) => r.ms)),
    gnuPeakMB: Math.max(...gnu.map((r) => r.peakMB)),
    gnuAdded: gnu[0].added,
    gnuRemoved: gnu[0].removed,
    applies: applies(dir, unifiedFile),
  };
}

async function main() {
  installCleanupHandlers();
  try {
    const root = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-diff-files-'));
    registerTempDir(root);
    const cases = shapes().map(([name, from, to], i) => {
      const dir = path.join(root, String(i));
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(path.join(dir, 'a.html'), from);
      writeFileSync(path.join(dir, 'b.html'), to);
      return { name, dir, from, to };
    });
    console.log(`${REPEATS} runs per shape; Node ${process.version}; ${os.cpus().length} cores`);
    const rows = cases.map(({ dir, name }) => measureShape(dir, name));
    const endpoint = await measureEndpoint(cases);
    const f = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
    console.log(
      '\n| shape | exact | +added / -removed (GNU diff) | diffTexts ms (max) | peak MB above rest | endpoint ms | service RSS +MB | GNU diff -u ms | GNU peak MB | time ratio | patch applies |',
    );
    console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
    rows.forEach((r, i) => {
      const e = endpoint[i];
      console.log(
        `| ${r.name} | ${r.exact ? 'yes' : 'coarse'} | +${r.added} / -${r.removed} (+${r.gnuAdded} / -${r.gnuRemoved}) | ${f(r.ms)} (${f(r.maxMs)}) | ${f(r.peakAboveRestMB)} | ${f(e.ms)} | ${f(e.rssAboveRestMB)} | ${f(r.gnuMs)} | ${f(r.gnuPeakMB)} | ${(r.ms / r.gnuMs).toPrecision(2)}x | ${r.applies ?? 'no patch'} |`,
      );
    });
    const broken = rows.filter((r) => r.applies === false);
    if (broken.length > 0) console.log(`NOT APPLICABLE: ${broken.map((r) => r.name).join(', ')}`);
    process.exitCode = broken.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

if (process.argv[2] === '--measure') await measureChild(process.argv[3], process.argv[4]);
else await main();
