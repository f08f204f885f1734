/**
 * The accuracy corpus of the look before publishing (docs/decisions/0034-a-look-before-publishing.md), generated
 * from a seed so that every run sees the same documents and no real secret is ever written down:
 *
 * - `secretCases()`: fake but well-formed secrets of 30 kinds (right prefixes, alphabets, lengths, and checksums
 *   where the format has one: GitHub's CRC32, this service's `hd_` tokens, JWT headers), three of each, each
 *   embedded in an HTML document in one of several ways (code block, table cell, script, comment, attribute, prose).
 * - `personalCases()`: Luhn-valid card numbers, mod-97-valid IBANs, and customer lists of email addresses or phone
 *   numbers, embedded likewise.
 * - `ordinaryDocuments()`: 300 documents as agents make them, with nothing to find: reports, changelogs with commit
 *   hashes, tables of UUIDs and long numbers, base64 images, code samples reading secrets from the environment,
 *   placeholders, CSS and SVG, infrastructure notes with public keys and ARNs, product lists with barcodes.
 *
 * Used by packages/server/test/scan-corpus.test.ts (thresholds) and bench/scan.mjs (timing).
 */
import { crc32 } from 'node:zlib';
import { reportHtml } from './report-corpus.mjs';

/** A seeded generator (mulberry32): floats in [0, 1). */
export function createRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const DIGITS = '0123456789';
const HEX = '0123456789abcdef';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALNUM = `${DIGITS}${UPPER}${LOWER}`;
const BASE62 = `${DIGITS}${UPPER}${LOWER}`;
const B64 = `${UPPER}${LOWER}${DIGITS}+/`;
const B64URL = `${UPPER}${LOWER}${DIGITS}-_`;
const BASE32 = `${UPPER}234567`;

const int = (rand, n) => Math.floor(rand() * n);
const pick = (rand, list) => list[int(rand, list.length)];
const chars = (rand, alphabet, n) => Array.from({ length: n }, () => alphabet[int(rand, alphabet.length)]).join('');

/** CRC32 as 6 base62 characters, most significant first (this service's tokens; GitHub's tokens likewise). */
function base62Checksum(body) {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const b64url = (text) => Buffer.from(text).toString('base64url');

function pemBody(rand, firstChars) {
  const body = firstChars + chars(rand, B64, 64 * (10 + int(rand, 12)) - firstChars.length);
  return body.match(/.{1,64}/g).join('\n');
}

const PASSWORDS = (rand) =>
  `${chars(rand, ALNUM, 10 + int(rand, 8))}${pick(rand, ['!', '#', '%', '_', ''])}${chars(rand, DIGITS, 2)}`;
const HOSTS = ['db.internal.acme-corp.net', 'prod-db-3.eu-west-1.rds.amazonaws.com', '10.20.4.17', 'pg.fintrack.io'];

/**
 * The secret kinds: each makes `{text, secret}` from a random source, `text` being what is embedded (the secret with
 * what a scanner needs around it, such as `aws_secret_access_key =`).
 */
export const SECRET_KINDS = [
  ['aws-access-key-id', (r) => `${pick(r, ['AKIA', 'ASIA'])}${chars(r, BASE32, 16)}`],
  ['aws-secret-access-key', (r) => ({ prefix: 'aws_secret_access_key = ', secret: chars(r, `${ALNUM}/+`, 40) })],
  [
    'github-token',
    (r) => {
      const body = chars(r, ALNUM, 30);
      return `${pick(r, ['ghp', 'gho', 'ghs'])}_${body}${base62Checksum(body)}`;
    },
  ],
  ['github-fine-grained-token', (r) => `github_pat_11${chars(r, `${UPPER}${DIGITS}`, 20)}_${chars(r, ALNUM, 59)}`],
  ['gitlab-token', (r) => `glpat-${chars(r, `${ALNUM}_-`, 20)}`],
  ['slack-bot-token', (r) => `xoxb-${chars(r, DIGITS, 12)}-${chars(r, DIGITS, 13)}-${chars(r, ALNUM, 24)}`],
  [
    'slack-webhook',
    (r) =>
      `https://hooks.slack.com/services/T${chars(r, `${UPPER}${DIGITS}`, 8)}/B${chars(r, `${UPPER}${DIGITS}`, 10)}/${chars(r, ALNUM, 24)}`,
  ],
  ['stripe-secret-key', (r) => `sk_live_${chars(r, ALNUM, 24 + int(r, 76))}`],
  ['stripe-restricted-key', (r) => `rk_live_${chars(r, ALNUM, 24 + int(r, 76))}`],
  ['openai-key', (r) => `sk-proj-${chars(r, B64URL, 74)}T3BlbkFJ${chars(r, B64URL, 74)}`],
  ['anthropic-key', (r) => `sk-ant-api03-${chars(r, B64URL, 93)}AA`],
  ['sendgrid-key', (r) => `SG.${chars(r, `${ALNUM}_-`, 22)}.${chars(r, `${ALNUM}_-`, 43)}`],
  ['npm-token', (r) => `npm_${chars(r, ALNUM, 36)}`],
  ['google-api-key', (r) => `AIza${chars(r, `${ALNUM}_-`, 35)}`],
  [
    'rsa-private-key',
    (r) => `-----BEGIN RSA PRIVATE KEY-----\n${pemBody(r, 'MIIEpAIBAAKCAQEA')}\n-----END RSA PRIVATE KEY-----`,
  ],
  [
    'openssh-private-key',
    (r) =>
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${pemBody(r, 'b3BlbnNzaC1rZXktdjEAAAAA')}\n-----END OPENSSH PRIVATE KEY-----`,
  ],
  ['ec-private-key', (r) => `-----BEGIN EC PRIVATE KEY-----\n${pemBody(r, 'MHcCAQEEI')}\n-----END EC PRIVATE KEY-----`],
  [
    'jwt',
    (r) => {
      const header = b64url(JSON.stringify({ alg: pick(r, ['HS256', 'RS256', 'ES256']), typ: 'JWT' }));
      const payload = b64url(
        JSON.stringify({
          sub: `user_${chars(r, ALNUM, 12)}`,
          iat: 1_760_000_000 + int(r, 9_000_000),
          role: pick(r, ['admin', 'service']),
        }),
      );
      return `${header}.${payload}.${chars(r, B64URL, 43)}`;
    },
  ],
  [
    'postgres-url',
    (r) =>
      `postgres://${pick(r, ['app', 'report_ro', 'admin'])}:${PASSWORDS(r)}@${pick(r, HOSTS)}:5432/${pick(r, ['sales', 'app', 'warehouse'])}`,
  ],
  [
    'mysql-url',
    (r) => `mysql://${pick(r, ['root', 'etl'])}:${PASSWORDS(r)}@${pick(r, HOSTS)}:3306/${pick(r, ['shop', 'crm'])}`,
  ],
  [
    'mongodb-url',
    (r) =>
      `mongodb+srv://${pick(r, ['svc', 'analytics'])}:${PASSWORDS(r)}@cluster0.${chars(r, LOWER + DIGITS, 5)}.mongodb.net/${pick(r, ['events', 'users'])}`,
  ],
  [
    'redis-url',
    (r) =>
      `redis://default:${PASSWORDS(r)}@redis-${chars(r, DIGITS, 5)}.c${chars(r, DIGITS, 3)}.cloud.redislabs.com:${chars(r, DIGITS, 5)}`,
  ],
  [
    'amqp-url',
    (r) =>
      `amqps://${pick(r, ['worker', 'queue'])}:${PASSWORDS(r)}@${pick(r, ['rabbit.acme-corp.net', 'mq.internal.io'])}/vhost`,
  ],
  [
    'basic-auth-url',
    (r) =>
      `https://${pick(r, ['deploy', 'ci-bot'])}:${chars(r, ALNUM, 16)}@${pick(r, ['registry.acme-corp.net', 'jenkins.fintrack.io'])}/api`,
  ],
  [
    'htmldrop-token',
    (r) => {
      const body = chars(r, BASE62, 32);
      return `hd_${body}${base62Checksum(body)}`;
    },
  ],
  ['huggingface-token', (r) => `hf_${chars(r, `${UPPER}${LOWER}`, 34)}`],
  ['shopify-token', (r) => `shpat_${chars(r, HEX, 32)}`],
  ['linear-key', (r) => `lin_api_${chars(r, ALNUM, 40)}`],
  ['docker-token', (r) => `dckr_pat_${chars(r, `${ALNUM}_-`, 27)}`],
  ['vault-token', (r) => `hvs.${chars(r, `${ALNUM}_-`, 91)}`],
  ['databricks-token', (r) => `dapi${chars(r, HEX, 32)}`],
  ['groq-key', (r) => `gsk_${chars(r, ALNUM, 52)}`],
  ['pypi-token', (r) => `pypi-AgEIcHlwaS5vcmc${chars(r, B64URL, 70)}`],
  ['telegram-bot-token', (r) => `${chars(r, '123456789', 1)}${chars(r, DIGITS, 9)}:AA${chars(r, `${ALNUM}_-`, 33)}`],
  ['digitalocean-token', (r) => `dop_v1_${chars(r, HEX, 64)}`],
  [
    'azure-storage-key',
    (r) => ({
      prefix: `DefaultEndpointsProtocol=https;AccountName=${chars(r, LOWER, 10)};AccountKey=`,
      secret: `${chars(r, B64, 86)}==`,
    }),
  ],
  ['twilio-api-key', (r) => `SK${chars(r, HEX, 32)}`],
  ['figma-token', (r) => `figd_${chars(r, `${ALNUM}_-`, 40 + int(r, 20))}`],
  ['grafana-service-account-token', (r) => `glsa_${chars(r, ALNUM, 32)}_${chars(r, HEX, 8)}`],
  ['notion-token', (r) => `ntn_${chars(r, DIGITS, 11)}${chars(r, ALNUM, 35)}`],
  ['vercel-token', (r) => `vcp_${chars(r, ALNUM, 24 + int(r, 30))}`],
  [
    '1password-service-account-token',
    (r) => {
      // A JSON object whose base64 ends in "fQ==" (its length one more than a multiple of three), as real ones do.
      let json = JSON.stringify({
        email: `${chars(r, LOWER, 13)}@1passwordserviceaccounts.lcl`,
        muk: { alg: 'A256GCM', k: chars(r, B64URL, 43) },
        secretKey: `A3-${chars(r, `${UPPER}${DIGITS}`, 26)}`,
        srpX: chars(r, HEX, 64),
      });
      while (json.length % 3 !== 1) json = `${json.slice(0, -1)} }`;
      return `ops_${Buffer.from(json).toString('base64')}`;
    },
  ],
];

/** Ways an agent's document carries a value: each returns the HTML before and after it. */
const EMBEDDINGS = [
  (name) => [
    `<h2>Deployment notes</h2>\n<p>Configuration used for the ${name} run:</p>\n<pre><code>export SERVICE_CREDENTIAL=`,
    '\nexport REGION=eu-west-1</code></pre>\n',
  ],
  () => [
    '<table>\n<tr><th>Setting</th><th>Value</th></tr>\n<tr><td>endpoint</td><td>https://api.acme-corp.net/v2</td></tr>\n<tr><td>credential</td><td>',
    '</td></tr>\n</table>\n',
  ],
  () => ['<script>\nconst settings = {\n  retries: 3,\n  credential: "', '",\n  timeoutMs: 5000,\n};\n</script>\n'],
  () => ['<!-- generated by the nightly job; credential: ', ' -->\n'],
  () => ['<div class="widget" data-config=\'{"key":"', '"}\'></div>\n'],
  () => ['<p>To reproduce the numbers, call the API with ', ' as shown in the appendix.</p>\n'],
];

/** The filler around an embedded value: a short report, so the value sits at a known line deep in a document. */
function filler(rand, rows) {
  const lines = [];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `<tr><td>${pick(rand, ['north', 'south', 'east', 'west'])}-${i}</td><td class="num">${(rand() * 10_000).toFixed(2)}</td><td>${chars(rand, HEX, 8)}</td></tr>`,
    );
  }
  return `<table class="data">\n${lines.join('\n')}\n</table>\n`;
}

/** The line (from 1) at which `offset` lies in `text`. */
export function lineAt(text, offset) {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function embedded(rand, name, value, index) {
  const { prefix = '', secret } = typeof value === 'string' ? { secret: value } : value;
  const [before, after] = EMBEDDINGS[index % EMBEDDINGS.length](name);
  const head = `<!doctype html>\n<html><head><meta charset="utf-8"><title>Weekly ${name} report</title></head>\n<body>\n<h1>Weekly report</h1>\n${filler(rand, 5 + int(rand, 40))}`;
  const html = `${head}${before}${prefix}${secret}${after}${filler(rand, 5 + int(rand, 20))}</body></html>\n`;
  return { html, secret, line: lineAt(html, html.indexOf(`${prefix}${secret}`)) };
}

/** Three cases of every secret kind: `{kind, html, secret, line}` (line: where the secret starts). */
export function secretCases(seed = 7) {
  const rand = createRandom(seed);
  const cases = [];
  SECRET_KINDS.forEach(([kind, make], k) => {
    for (let i = 0; i < 3; i++) cases.push({ kind, ...embedded(rand, kind, make(rand), k + i) });
  });
  return cases;
}

/** Digits completed with their Luhn check digit. */
function withLuhn(partial) {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let d = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return partial + String((10 - (sum % 10)) % 10);
}

/** An IBAN of `country` with its check digits computed (ISO 13616: mod 97 of the rearranged number is 1). */
function iban(country, bban) {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of numeric) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}

const FIRST = [
  'Anna',
  'Ben',
  'Chloé',
  'David',
  'Elif',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Liam',
  'Mira',
  'Noah',
  'Olga',
  'Priya',
  'Quinn',
  'Rosa',
  'Sven',
  'Tariq',
  'Uma',
  'Viktor',
  'Wen',
  'Yara',
  'Zoe',
];
const LAST = [
  'Schmidt',
  'Okafor',
  'Nguyen',
  'Garcia',
  'Rossi',
  'Kowalski',
  'Tanaka',
  'Dubois',
  'Silva',
  'Novak',
  'Jensen',
  'Haddad',
  'Murphy',
  'Ivanova',
  'Park',
];
const MAIL_DOMAINS = [
  'gmail.com',
  'outlook.com',
  'yahoo.co.uk',
  'gmx.de',
  'proton.me',
  'icloud.com',
  'web.de',
  'orange.fr',
];

function customerRows(rand, count, contact) {
  const rows = [];
  for (let i = 0; i < count; i++) {
    const first = pick(rand, FIRST);
    const last = pick(rand, LAST);
    rows.push(
      `<tr><td>${first} ${last}</td><td>${contact(rand, first, last, i)}</td><td class="num">${(rand() * 5000).toFixed(2)}</td></tr>`,
    );
  }
  return `<table>\n<tr><th>Customer</th><th>Contact</th><th>Lifetime value</th></tr>\n${rows.join('\n')}\n</table>\n`;
}

const email = (rand, first, last, i) =>
  `${first
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase()}.${last.toLowerCase()}${i}@${pick(rand, MAIL_DOMAINS)}`;
const phone = (rand) =>
  pick(rand, [
    () => `+44 7${chars(rand, DIGITS, 3)} ${chars(rand, DIGITS, 6)}`,
    () => `+49 151 ${chars(rand, DIGITS, 8)}`,
    () =>
      `(${chars(rand, '23456789', 1)}${chars(rand, DIGITS, 2)}) ${chars(rand, '23456789', 1)}${chars(rand, DIGITS, 2)}-${chars(rand, DIGITS, 4)}`,
    () =>
      `+33 6 ${chars(rand, DIGITS, 2)} ${chars(rand, DIGITS, 2)} ${chars(rand, DIGITS, 2)} ${chars(rand, DIGITS, 2)}`,
  ])();

/** The line of a customer table's first row (where a list's first value is). */
const firstRowLine = (html) => lineAt(html, html.indexOf('<tr><td>', html.indexOf('<th>Customer')));

/** Personal data: `{kind, html, line}` for cards, IBANs, and lists of addresses and phone numbers. */
export function personalCases(seed = 11) {
  const rand = createRandom(seed);
  const cases = [];
  const cards = [
    () => withLuhn(`4${chars(rand, DIGITS, 14)}`).replace(/(\d{4})(?=\d)/g, '$1 '),
    () => withLuhn(`5${chars(rand, '12345', 1)}${chars(rand, DIGITS, 13)}`).replace(/(\d{4})(?=\d)/g, '$1-'),
    () => {
      const n = withLuhn(`3${pick(rand, ['4', '7'])}${chars(rand, DIGITS, 12)}`);
      return `${n.slice(0, 4)} ${n.slice(4, 10)} ${n.slice(10)}`;
    },
    () => ({ prefix: 'Card number: ', secret: withLuhn(`4${chars(rand, DIGITS, 14)}`) }),
    () => ({ prefix: 'charged to Visa ', secret: withLuhn(`4${chars(rand, DIGITS, 14)}`) }),
    () => withLuhn(`6011${chars(rand, DIGITS, 11)}`).replace(/(\d{4})(?=\d)/g, '$1 '),
  ];
  cards.forEach((make, i) => {
    cases.push({ kind: 'card-number', ...embedded(rand, 'billing', make(), i) });
  });
  const ibans = [
    () => iban('DE', chars(rand, DIGITS, 18)),
    () => iban('GB', `${pick(rand, ['NWBK', 'BARC', 'HBUK'])}${chars(rand, DIGITS, 14)}`),
    () => iban('FR', chars(rand, DIGITS, 23)),
    () => iban('NL', `${pick(rand, ['ABNA', 'INGB', 'RABO'])}${chars(rand, DIGITS, 10)}`),
    () => iban('ES', chars(rand, DIGITS, 20)),
    () => iban('IT', `X${chars(rand, DIGITS, 22)}`),
  ];
  ibans.forEach((make, i) => {
    const value = make();
    const grouped = i % 2 === 0 ? value.replace(/(.{4})(?=.)/g, '$1 ') : value;
    cases.push({ kind: 'iban', ...embedded(rand, 'payout', grouped, i + 1) });
  });
  for (let i = 0; i < 4; i++) {
    const table = customerRows(rand, 12 + int(rand, 30), email);
    const html = `<!doctype html>\n<html><head><title>Customer export</title></head><body>\n<h1>Top customers</h1>\n${filler(rand, 3)}${table}</body></html>\n`;
    cases.push({ kind: 'email-list', html, line: firstRowLine(html) });
  }
  for (let i = 0; i < 4; i++) {
    const table = customerRows(rand, 12 + int(rand, 30), phone);
    const html = `<!doctype html>\n<html><head><title>Call list</title></head><body>\n<h1>Renewals to call</h1>\n${filler(rand, 3)}${table}</body></html>\n`;
    cases.push({ kind: 'phone-list', html, line: firstRowLine(html) });
  }
  return cases;
}

// Ordinary documents: nothing in them should be reported.

const commitLog = (rand) =>
  Array.from(
    { length: 20 + int(rand, 60) },
    (_, i) =>
      `<li><code>${chars(rand, HEX, 40)}</code> ${pick(rand, ['fix', 'feat', 'chore', 'docs'])}: ${pick(rand, ['retry uploads', 'cache tokens per request', 'rotate logs', 'tidy the report'])} (#${1000 + i}) <span class="muted">${pick(rand, FIRST)}</span></li>`,
  ).join('\n');

const uuidTable = (rand) =>
  Array.from({ length: 30 + int(rand, 200) }, () => {
    const uuid = `${chars(rand, HEX, 8)}-${chars(rand, HEX, 4)}-4${chars(rand, HEX, 3)}-${pick(rand, ['8', '9', 'a', 'b'])}${chars(rand, HEX, 3)}-${chars(rand, HEX, 12)}`;
    return `<tr><td>${uuid}</td><td class="num">${chars(rand, '123456789', 1)}${chars(rand, DIGITS, 9 + int(rand, 10))}</td><td>${1_700_000_000_000 + int(rand, 90_000_000_000)}</td><td>${(rand() * 1e6).toFixed(2)}</td><td>#${chars(rand, HEX, 6)}</td></tr>`;
  }).join('\n');

const imageGallery = (rand) =>
  Array.from({ length: 1 + int(rand, 4) }, () => {
    const bytes = Buffer.from(Array.from({ length: 2000 + int(rand, 15000) }, () => int(rand, 256)));
    return `<figure><img alt="chart" src="data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), bytes]).toString('base64')}"><figcaption>Figure</figcaption></figure>`;
  }).join('\n');

// Code as agents paste it: `${…}` is the sample's own placeholder syntax, not this file's.
const D = '$';
const CODE_SAMPLES = [
  '<pre><code class="language-js">const client = new Client({\n  apiKey: process.env.PAYMENTS_API_KEY,\n  baseUrl: "https://api.example.com/v1",\n});\nconst res = await fetch(url, { headers: { Authorization: `Bearer ' +
    D +
    '{token}` } });\n</code></pre>',
  '<pre><code class="language-python">import os\npassword = os.environ["DB_PASSWORD"]\nconn = psycopg.connect(f"postgresql://app:{password}@localhost:5432/app")\nprint(hashlib.sha256(data).hexdigest())\n</code></pre>',
  '<pre><code class="language-yaml">database:\n  url: postgres://localhost:5432/reports\n  user: reporter\n  password: ' +
    D +
    '{DB_PASSWORD}\nredis: redis://localhost:6379/0\n</code></pre>',
  '<pre><code class="language-bash">export DATABASE_URL="postgres://user:password@localhost:5432/dev"\ncurl -H "Authorization: Bearer $HTMLDROP_TOKEN" https://drops.example.com/api/drops\n</code></pre>',
  '<pre><code class="language-sql">SELECT customer_id, sum(amount) FROM payments WHERE created_at &gt; now() - interval \'30 days\' GROUP BY 1 ORDER BY 2 DESC LIMIT 20;\n</code></pre>',
  '<p>Set <code>STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx</code> in your environment; never commit it. Tokens look like <code>hd_&lt;38 characters&gt;</code>.</p>',
  '<pre><code class="language-js">// Example: the key is read at run time\nconst key = config.get("openai.apiKey"); // sk-...\nconst jwt = req.headers.authorization?.split(" ")[1];\n</code></pre>',
  '<pre><code>mongodb://localhost:27017/test\nmysql://root@127.0.0.1:3306/shop\nhttps://user@git.example.com/repo.git\n</code></pre>',
];

const infraNotes = (rand) => `<h2>Infrastructure</h2>
<ul>
<li>Role: <code>arn:aws:iam::${chars(rand, DIGITS, 12)}:role/ReportWriter</code></li>
<li>Bucket: <code>arn:aws:s3:::acme-reports-${chars(rand, LOWER, 6)}</code></li>
<li>Account: ${chars(rand, DIGITS, 12)}</li>
<li>Host key: <code>ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${chars(rand, B64, 43)} deploy@ci</code></li>
<li>Fingerprint: SHA256:${chars(rand, B64, 43)}</li>
<li>Cert serial: ${Array.from({ length: 16 }, () => chars(rand, '0123456789ABCDEF', 2)).join(':')}</li>
<li>Nodes: ${Array.from({ length: 6 }, () => `10.${int(rand, 255)}.${int(rand, 255)}.${int(rand, 255)}`).join(', ')}</li>
<li>Image: <code>registry.acme-corp.net/api@sha256:${chars(rand, HEX, 64)}</code></li>
</ul>
<pre>-----BEGIN PUBLIC KEY-----
${pemBody(rand, 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA')}
-----END PUBLIC KEY-----</pre>`;

const productTable = (rand) =>
  Array.from(
    { length: 20 + int(rand, 60) },
    () =>
      `<tr><td>${pick(rand, ['Desk lamp', 'Notebook', 'Cable', 'Monitor arm', 'Backpack'])}</td><td>${withLuhn(`40${chars(rand, DIGITS, 10)}`)}</td><td>SKU-${chars(rand, `${UPPER}${DIGITS}`, 8)}</td><td>ISBN 978-${chars(rand, DIGITS, 1)}-${chars(rand, DIGITS, 3)}-${chars(rand, DIGITS, 5)}-${chars(rand, DIGITS, 1)}</td><td>1Z${chars(rand, `${UPPER}${DIGITS}`, 16)}</td><td class="num">${(rand() * 200).toFixed(2)}</td></tr>`,
  ).join('\n');

const financeRows = (rand) =>
  Array.from(
    { length: 20 + int(rand, 80) },
    () =>
      `<tr><td>TX-${chars(rand, '123456789', 1)}${chars(rand, DIGITS, 15)}</td><td>Invoice ${chars(rand, DIGITS, 8)}</td><td>Acct ending ${chars(rand, DIGITS, 4)}</td><td>${pick(rand, ['EUR', 'USD', 'GBP'])} ${(rand() * 1e5).toFixed(2)}</td><td>${pick(rand, ['+', '-'])}${(rand() * 20).toFixed(2)}%</td><td>${2020 + int(rand, 6)}-${String(1 + int(rand, 12)).padStart(2, '0')}-${String(1 + int(rand, 28)).padStart(2, '0')}</td></tr>`,
  ).join('\n');

const teamPage = (rand) => {
  const people = Array.from(
    { length: 3 + int(rand, 4) },
    (_, i) =>
      `<li>${pick(rand, FIRST)} ${pick(rand, LAST)}, ${pick(rand, ['analyst', 'lead', 'engineer'])}: <a href="mailto:${email(rand, pick(rand, FIRST), pick(rand, LAST), i)}">email</a></li>`,
  );
  return `<h2>Contacts</h2><ul>${people.join('')}</ul><p>Support: +44 20 ${chars(rand, DIGITS, 4)} ${chars(rand, DIGITS, 4)}, (415) 555-${chars(rand, DIGITS, 4)}. Write to support@acme-corp.net or press@acme-corp.net.</p>`;
};

const cssAndSvg = (
  rand,
) => `<style>${Array.from({ length: 30 + int(rand, 100) }, (_, i) => `.c${i}{color:#${chars(rand, HEX, 6)};background:linear-gradient(90deg,#${chars(rand, HEX, 6)},rgba(${int(rand, 255)},${int(rand, 255)},${int(rand, 255)},.${int(rand, 9)}));margin:${int(rand, 40)}px ${int(rand, 40)}px}`).join('\n')}</style>
<svg viewBox="0 0 800 300"><path d="M0 ${int(rand, 300)} ${Array.from({ length: 200 + int(rand, 400) }, (_, i) => `L${i * 2} ${(rand() * 300).toFixed(3)}`).join(' ')}"/></svg>`;

const dataScript = (rand) =>
  `<script>window.DATA=${JSON.stringify(Array.from({ length: 50 + int(rand, 300) }, () => ({ id: chars(rand, `${ALNUM}_-`, 21), ref: chars(rand, HEX, 24), customer: `cus_${chars(rand, ALNUM, 14)}`, payment: `pi_${chars(rand, ALNUM, 24)}`, token: chars(rand, B64URL, 32), v: Number((rand() * 1000).toFixed(3)) })))};</script>`;

const ORDINARY_PARTS = [
  (rand) => `<h2>Changes</h2><ul>${commitLog(rand)}</ul>`,
  (rand) => `<h2>Records</h2><table>${uuidTable(rand)}</table>`,
  (rand) => `<h2>Charts</h2>${imageGallery(rand)}`,
  (rand) => `<h2>How to run it</h2>${pick(rand, CODE_SAMPLES)}${pick(rand, CODE_SAMPLES)}`,
  (rand) => infraNotes(rand),
  (rand) => `<h2>Catalogue</h2><table>${productTable(rand)}</table>`,
  (rand) => `<h2>Ledger</h2><table>${financeRows(rand)}</table>`,
  (rand) => teamPage(rand),
  (rand) => cssAndSvg(rand),
  (rand) => dataScript(rand),
];

/** 300 ordinary documents (the first of every ten a ~100 KB report of bench/report-corpus.mjs), deterministic. */
export function ordinaryDocuments(count = 300, seed = 13) {
  const rand = createRandom(seed);
  const docs = [];
  for (let i = 0; i < count; i++) {
    if (i % 10 === 0) {
      docs.push(reportHtml(i, 20_000 + int(rand, 80_000)));
      continue;
    }
    // Two to four different kinds of section, each once.
    const kinds = [...ORDINARY_PARTS].sort(() => rand() - 0.5).slice(0, 2 + int(rand, 3));
    const parts = kinds.map((part) => part(rand));
    docs.push(
      `<!doctype html>\n<html><head><meta charset="utf-8"><title>Report ${i}</title></head>\n<body>\n<h1>Report ${i}</h1>\n${parts.join('\n')}\n</body></html>\n`,
    );
  }
  return docs;
}
