/** Bad input and failing services: one clear line on stderr and a documented exit code, never a stack trace. */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/test/process.js';
import { PAGE, run, type Sandbox, sandbox, write } from './run.js';
import { expectOneLine, startService, useService } from './service.js';

const service = useService();

describe('bad input: one clear line on stderr and a documented exit code', () => {
  let box: Sandbox & { token: string };
  beforeAll(async () => {
    box = await service.signedIn('careless');
  });

  it('refuses a missing file, a directory, binary data and a non-HTML file (exit 2)', async () => {
    const cases: [string, RegExp][] = [
      [path.join(box.cwd, 'nope.html'), /nope\.html: no such file\. \[file_not_found\]/],
      [box.cwd, /is a directory.*\[is_directory\]/],
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
    expectOneLine(garbage.stderr, /is not an htmldrop token.*\[invalid_token\]/);

    const env = await run(sandbox(service.baseUrl), ['whoami'], { env: { HTMLDROP_TOKEN: 'ghp_nope' } });
    expect(env.code).toBe(3);
    expectOneLine(env.stderr, /HTMLDROP_TOKEN is not an htmldrop token/);
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

  it('without a token, owner commands exit 3 and say how to sign in', async () => {
    const out = await run(sandbox(service.baseUrl), ['list']);
    expect(out.code).toBe(3);
    expectOneLine(out.stderr, /No token found .*Sign in with: htmldrop login \[no_token\]/);
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
