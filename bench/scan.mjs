#!/usr/bin/env node
/**
 * `npm run bench:scan`: the cost of the look before publishing (docs/decisions/0034-a-look-before-publishing.md), in
 * one process, on tsc's build of the scanner (packages/server/dist/scan/):
 *
 * 1. Loading: the first scan, which imports the engine and secretlint.
 * 2. Time per 100 KB: every scan of BENCH_SCAN_DOCS report-like documents of about 100 KB (bench/report-corpus.mjs,
 *    every one distinct), BENCH_SCAN_ROUNDS times; median and p99 per document, and the same split into secretlint's
 *    preset, our secret rules and the personal-data checks.
 * 3. The whole accuracy corpus (bench/scan-corpus.mjs): bytes per second.
 * 4. Hostile inputs of 100 KB (long runs of one character, of prefixes the rules look for, one line of base64) and one
 *    document at the 2 MiB limit: the slowest each takes, so that no input stalls the event loop for long.
 *
 * See bench/README.md ("The look before publishing") for how to read it and the figures so far.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { intEnv, median, quantile } from './lib.mjs';
import { reportHtml } from './report-corpus.mjs';
import { ordinaryDocuments, personalCases, secretCases } from './scan-corpus.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'packages/server/dist/scan');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);

const config = {
  docs: intEnv('BENCH_SCAN_DOCS', 50, 1),
  rounds: intEnv('BENCH_SCAN_ROUNDS', 5, 1),
};

const ms = (start) => performance.now() - start;
const fixed = (value) => value.toFixed(2);

async function timeEach(items, run) {
  const times = [];
  for (const item of items) {
    const start = performance.now();
    await run(item);
    times.push(ms(start));
  }
  return times;
}

const started = performance.now();
const { createScanner } = await load('scanner.js');
const scanner = createScanner();
await scanner.scan([{ where: 'html', text: '<p>warm</p>' }]);
const loadMs = ms(started);
const { findWithSecretlint } = await load('secretlint.js');
const { findSecrets } = await load('secrets.js');
const { findPersonalData } = await load('personal-data.js');

console.log(
  `bench:scan: Node ${process.version}, ${config.docs} documents of ~100 KB x ${config.rounds} rounds; first scan (loading the engine and secretlint) ${fixed(loadMs)} ms`,
);

const documents = Array.from({ length: config.docs }, (_, i) => reportHtml(1000 + i, 100_000));
const per100k = (times, docs) => times.map((t, i) => (t * 100_000) / docs[i % docs.length].length);
const split = { whole: [], secretlint: [], ours: [], personal: [] };
for (let round = 0; round < config.rounds; round++) {
  split.whole.push(...per100k(await timeEach(documents, (d) => scanner.scan([{ where: 'html', text: d }])), documents));
  split.secretlint.push(...per100k(await timeEach(documents, (d) => findWithSecretlint(d)), documents));
  split.ours.push(...per100k(await timeEach(documents, (d) => findSecrets(d)), documents));
  split.personal.push(...per100k(await timeEach(documents, (d) => findPersonalData(d)), documents));
}
for (const [name, times] of Object.entries(split)) {
  console.log(
    `  ${name.padEnd(10)} ms per 100 KB: median ${fixed(median(times))}, p99 ${fixed(quantile(times, 0.99))}`,
  );
}

const corpus = [...ordinaryDocuments(), ...secretCases().map((c) => c.html), ...personalCases().map((c) => c.html)];
const corpusBytes = corpus.reduce((sum, d) => sum + d.length, 0);
const corpusStart = performance.now();
for (const d of corpus) await scanner.scan([{ where: 'html', text: d }]);
const corpusMs = ms(corpusStart);
console.log(
  `  accuracy corpus: ${corpus.length} documents, ${(corpusBytes / 1e6).toFixed(1)} MB in ${fixed(corpusMs)} ms (${fixed(corpusBytes / 1e3 / corpusMs)} MB/s)`,
);

const n = 100_000;
const hostile = {
  'one letter': 'a'.repeat(n),
  newlines: '\n'.repeat(n),
  'base64 line': randomBytes(75_000).toString('base64'),
  digits: '4'.repeat(n),
  'digit groups': '4111 '.repeat(n / 5),
  'user:pass@': 'a:b@'.repeat(n / 4),
  'scheme://': 'x://'.repeat(n / 4),
  'BEGIN header': '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(n / 32),
  'eyJ.': 'eyJ.'.repeat(n / 4),
  'xoxb-1-': 'xoxb-1-'.repeat(n / 7),
  '@ addresses': 'a@b.cd '.repeat(n / 7),
  '+phone': '+1 23 '.repeat(n / 6),
  'IBAN-like': 'DE89 3704 '.repeat(n / 10),
};
const worst = [];
for (const [name, text] of Object.entries(hostile)) {
  const [time] = await timeEach([text], (t) => scanner.scan([{ where: 'html', text: t }]));
  worst.push([name, time]);
}
worst.sort((a, b) => b[1] - a[1]);
console.log(`  hostile 100 KB inputs, slowest first: ${worst.map(([name, t]) => `${name} ${fixed(t)} ms`).join(', ')}`);
const limit = reportHtml(7, 2_097_152);
const [limitMs] = await timeEach([limit], (t) => scanner.scan([{ where: 'html', text: t }]));
console.log(`  one document at the 2 MiB limit: ${fixed(limitMs)} ms`);
