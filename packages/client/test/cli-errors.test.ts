/** Bad input and failing services: one clear line on stderr and a documented exit code, never a stack trace. */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/test/process.js';
import { writeProjectToken, writeTokenFile } from '../src/token-store.js';
import { PAGE, run, type Sandbox, sandbox, write } from './run.js';
import { expectOneLine, startService, useService } from './service.js';

const service = useService();

/** A token the service minted, then revoked (through the API, as `htmldrop revoke` does). */
async function revokedToken(user: string): Promise<string> {
  const token = await service.mintToken(user);
  const headers = { authorization: `Bearer ${token}` };
  const me = (await (await fetch(`${service.baseUrl}/api/me`, { headers })).json()) as { token: { id: string } };
  const revoked = await fetch(`${service.baseUrl}/api/tokens/${me.token.id}`, { method: 'DELETE', headers });
  expect(revoked.status).toBe(204);
  return token;
}

/** The whole stderr of a failed command: `htmldrop: <message> [<code>]`, one line. */
const failure = (message: string, code: string) => `htmldrop: ${message} [${code}]\n`;

describe('bad input: one clear line on stderr and a documented exit code', () => {
  let box: Sandbox & { token: string };
  beforeAll(async () => {
    box = await service.signedIn('careless');
  });

  it('refuses a missing file, a directory, binary data and a non-HTML file (exit 2)', async () => {
    const cases: [string, RegExp][] = [
      [path.join(box.cwd, 'nope.html'), /nope\.html: no such file\. \[file_not_found\]/],
      // A folder is published as its index.html with its files (docs/api.md, "Many files in one drop"): this one has none.
      [box.cwd, /has no index\.html.*\[no_index\]/],
      [
        write(box.cwd, 'logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])),
        /binary data.*\[binary_file\]/,
      ],
      [write(box.cwd, 'latin1.html', Buffer.from('<p>caf\xe9</p>', 'latin1')), /not valid UTF-8.*\[binary_file\]/],
      [write(box.cwd, 'notes.md', '# Notes\n\nSome *markdown*.\n'), /does not look like HTML.*\[not_html\]/],
      [
        write(box.cwd, 'big.html', `<!doctype html><p>${'x'.repeat(2_097_152)}</p>`),
        /exceeds 2097152 bytes.*\[html_too_large\]/,
      ],
    ];
    for (const [file, pattern] of cases) {
      const out = await run(box, ['publish', file, '--title', 'x']);
      expect(out.code, `${file}: ${out.stderr}`).toBe(2);
      expectOneLine(out.stderr, pattern);
    }
    const forced = await run(box, ['publish', path.join(box.cwd, 'notes.md'), '--title', 'notes', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
  });

  it.skipIf(process.getuid?.() === 0)('refuses an unreadable file (exit 2)', async () => {
    const file = write(box.cwd, 'locked.html', PAGE('x'));
    fs.chmodSync(file, 0o000);
    const out = await run(box, ['publish', file]);
    expect(out.code).toBe(2);
    expectOneLine(out.stderr, /Cannot read .*\[file_unreadable\]/);
  });

  it('refuses a token file readable by others, and one holding garbage (exit 3)', async () => {
    const loose = sandbox(service.baseUrl);
    const dir = path.join(loose.cwd, '.htmldrop');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'token'), `${box.token}\n`, { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'token'), 0o644);
    const out = await run(loose, ['whoami']);
    expect(out.code).toBe(3);
    expectOneLine(
      out.stderr,
      /Permissions 0644 for the token file .* are too open.*chmod 600 .*\[token_file_permissions\]/,
    );

    fs.writeFileSync(path.join(dir, 'token'), '{"token": "what?"}\n', { mode: 0o600 });
    fs.chmodSync(path.join(dir, 'token'), 0o600);
    const garbage = await run(loose, ['whoami']);
    expect(garbage.code).toBe(3);
    expect(garbage.stderr).toBe(
      failure(
        `The token from the file ${path.join(fs.realpathSync(loose.cwd), '.htmldrop', 'token')} is not an htmldrop token (it does not look like hd_<base62>). Run \`htmldrop login --project\` in ${fs.realpathSync(loose.cwd)} to sign in again; it replaces that file.`,
        'invalid_token',
      ),
    );

    const env = await run(sandbox(service.baseUrl), ['whoami'], { env: { HTMLDROP_TOKEN: 'ghp_nope' } });
    expect(env.code).toBe(3);
    expect(env.stderr).toBe(
      failure(
        'The token from the HTMLDROP_TOKEN environment variable is not an htmldrop token (it does not look like hd_<base62>). Run `htmldrop login` to sign in again, then unset HTMLDROP_TOKEN (or set it to the new token).',
        'invalid_token',
      ),
    );

    const flag = await run(sandbox(service.baseUrl), ['whoami', '--token', '']);
    expect(flag.code).toBe(3);
    expect(flag.stderr).toBe(
      failure(
        'The token from the --token flag is not an htmldrop token (it is empty). Run `htmldrop login` to sign in again, then stop passing --token (or pass the new token).',
        'invalid_token',
      ),
    );
  });

  it('reports a service that is down, or that answers something else than the API (exit 6)', async () => {
    const port = await freePort();
    const down = await run(box, ['list', '--server', `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(6);
    expectOneLine(
      down.stderr,
      /Cannot reach the htmldrop service at http:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\[network_error\]/,
    );

    const other = http.createServer((request, response) => {
      response.writeHead(request.url?.startsWith('/api/drops') === true ? 200 : 404, { 'content-type': 'text/html' });
      response.end('<html><body>Welcome to nginx!</body></html>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const list = await run(box, ['list', '--server', url]);
      expect(list.code).toBe(6);
      expectOneLine(
        list.stderr,
        /HTTP 200 with non-JSON \(text\/html\): is http:\/\/127\.0\.0\.1:\d+ an htmldrop service\? \[bad_response\]/,
      );
      const me = await run(box, ['whoami', '--server', url]);
      expect(me.code).toBe(6);
      expectOneLine(me.stderr, /HTTP 404 with non-JSON.*\[bad_response\]/);
    } finally {
      other.close();
    }
  });

  it('usage errors exit 2: unknown command, unknown flag, bad tags, missing argument', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /Unknown command "frobnicate"/],
      [['list', '--colour'], /Unknown option '--colour'/],
      [['publish', 'x.html', '--meta', 'novalue'], /--meta expects key=value/],
      [['publish', 'x.html', '--meta=-bad=1'], /not a valid metadata key/],
      [['publish', 'x.html', '--meta'], /argument missing/],
      [['show'], /show: missing <slug>/],
      [['list', '--limit', 'many'], /--limit expects a whole number/],
      [['list', '--server', 'ftp://x'], /must start with http/],
    ];
    for (const [args, pattern] of cases) {
      const out = await run(box, args);
      expect(out.code, `${args.join(' ')}: ${out.stderr}`).toBe(2);
      expectOneLine(out.stderr, pattern);
    }
    const help = await run(box, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes:');
    expect((await run(box, ['publish', '--help'])).stdout).toContain('--upsert k=v');
    expect((await run(box, ['--version'])).stdout).toBe('1.0.0\n');
  });

  it('without a token, owner commands exit 3, list every place looked at and say how to sign in', async () => {
    const empty = sandbox(service.baseUrl);
    const out = await run(empty, ['list']);
    expect(out.code).toBe(3);
    const user = path.join(empty.home, '.config', 'htmldrop', 'token');
    expect(out.stderr).toBe(
      failure(
        `No token found: looked at the --token flag, the file ${path.join(fs.realpathSync(empty.cwd), '.htmldrop', 'token')}, the HTMLDROP_TOKEN environment variable and the file ${user}. Run \`htmldrop login\` to sign in; it writes ${user}.`,
        'no_token',
      ),
    );
  });
});

describe('a revoked token: exit 3, naming where the token came from and how to sign in again', () => {
  it('from ~/.config/htmldrop/token: `htmldrop login` replaces that file', async () => {
    const box = sandbox(service.baseUrl);
    const file = path.join(box.home, '.config', 'htmldrop', 'token');
    await writeTokenFile(file, await revokedToken('lapsed-user'));
    const out = await run(box, ['list']);
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      failure(
        `The service refused the token from the file ${file}: it is revoked, unknown or malformed. Run \`htmldrop login\` to sign in again; it replaces that file.`,
        'invalid_token',
      ),
    );
    expect(JSON.parse(out.stdout)).toMatchObject({
      error: { code: 'invalid_token', status: 401, details: { token_source: file } },
      exit_code: 3,
    });
  });

  it('from ./.htmldrop/token: `htmldrop login --project` in that directory replaces it', async () => {
    const box = sandbox(service.baseUrl);
    await writeProjectToken(box.cwd, await revokedToken('lapsed-project'));
    const cwd = fs.realpathSync(box.cwd);
    const out = await run(box, ['whoami', '--human']);
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      failure(
        `The service refused the token from the file ${path.join(cwd, '.htmldrop', 'token')}: it is revoked, unknown or malformed. Run \`htmldrop login --project\` in ${cwd} to sign in again; it replaces that file.`,
        'invalid_token',
      ),
    );
    expect(out.stdout).toBe('');
  });

  it('from HTMLDROP_TOKEN: sign in again, then unset the variable', async () => {
    const box = sandbox(service.baseUrl, { HTMLDROP_TOKEN: await revokedToken('lapsed-env') });
    const out = await run(box, ['publish', write(box.cwd, 'p.html', PAGE('p'))]);
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      failure(
        'The service refused the token from the HTMLDROP_TOKEN environment variable: it is revoked, unknown or malformed. Run `htmldrop login` to sign in again, then unset HTMLDROP_TOKEN (or set it to the new token).',
        'invalid_token',
      ),
    );
    expect(JSON.parse(out.stdout).error.details).toEqual({ token_source: 'HTMLDROP_TOKEN' });
  });

  it('from --token: sign in again, then stop passing it', async () => {
    const box = sandbox(service.baseUrl);
    const out = await run(box, ['list', '--token', await revokedToken('lapsed-flag')]);
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      failure(
        'The service refused the token from the --token flag: it is revoked, unknown or malformed. Run `htmldrop login` to sign in again, then stop passing --token (or pass the new token).',
        'invalid_token',
      ),
    );
  });
});

describe('rate limits', () => {
  it('a write still refused after the retries exits 5 and says when to retry', async () => {
    const limited = await startService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1' });
    try {
      const box = sandbox(limited.baseUrl, { HTMLDROP_TOKEN: await limited.mintToken('busy') });
      const file = write(box.cwd, 'r.html', PAGE('r'));
      let last = await run(box, ['publish', file, '--retries', '0']);
      // Two writes in one calendar minute, unless the minute turned in between: then try again.
      for (let i = 0; i < 3 && last.code === 0; i++) last = await run(box, ['publish', file, '--retries', '0']);
      expect(last.code).toBe(5);
      expectOneLine(last.stderr, /Retry after \d+ s\. \[rate_limited\]/);
      expect(JSON.parse(last.stdout)).toMatchObject({ error: { code: 'rate_limited', status: 429 }, exit_code: 5 });
    } finally {
      await limited.stop();
    }
  });
});
