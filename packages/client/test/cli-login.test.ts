/** `htmldrop login`, `whoami`, `logout`: the device flow through the local provider, the human played over fetch. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Me } from '../src/types.js';
import { approveDeviceCode } from './human.js';
import { login, run, runJson, sandbox, spawnCli } from './run.js';
import { expectOneLine, useService } from './service.js';

const service = useService();

const api = (token: string, p: string) =>
  fetch(`${service.baseUrl}${p}`, { headers: { authorization: `Bearer ${token}` } });

describe('login, whoami, logout', () => {
  it('signs in through the device flow, stores the token 0600 in a 0700 directory, and whoami uses it', async () => {
    const box = sandbox(service.baseUrl);
    const result = await login(box, 'alice', ['--label', 'ci laptop']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(result.url);
    expect(result.stderr).toMatch(/Waiting for approval\.\.\. \d+ s left/);
    const file = path.join(box.home, '.config', 'htmldrop', 'token');
    expect(JSON.parse(result.stdout)).toMatchObject({ login: 'alice', provider: 'local', token_path: file });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^hd_[0-9A-Za-z]+\n$/);

    const me = await runJson<Me & { token_source: string }>(box, ['whoami']);
    expect(me.code, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ login: 'alice', token: { label: 'ci laptop' }, token_source: file });
    const human = await run(box, ['whoami', '--human']);
    expect(human.stdout).toMatch(/^alice \(local, u_/);
  });

  it('login --project stores ./.htmldrop/token (with a .gitignore), which wins over the user token', async () => {
    const box = sandbox(service.baseUrl);
    expect((await login(box, 'carol')).code).toBe(0);
    const result = await login(box, 'dave', ['--project']);
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(box.cwd, '.htmldrop', 'token');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(box.cwd, '.htmldrop', '.gitignore'), 'utf8')).toBe('*\n');
    expect((await runJson<Me>(box, ['whoami'])).json.login).toBe('dave');
    // HTMLDROP_TOKEN comes after the project file, before the user file.
    const carolToken = fs.readFileSync(path.join(box.home, '.config', 'htmldrop', 'token'), 'utf8').trim();
    const env = await run(box, ['whoami'], { env: { HTMLDROP_TOKEN: carolToken } });
    expect(JSON.parse(env.stdout).login).toBe('dave');
    fs.rmSync(file);
    const fromEnv = await run(box, ['whoami'], { env: { HTMLDROP_TOKEN: carolToken } });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ login: 'carol', token_source: 'HTMLDROP_TOKEN' });
  });

  it('logout revokes the token on the service and removes the file', async () => {
    const box = sandbox(service.baseUrl);
    expect((await login(box, 'erin')).code).toBe(0);
    const file = path.join(box.home, '.config', 'htmldrop', 'token');
    const token = fs.readFileSync(file, 'utf8').trim();
    const out = await runJson<{ removed: string; revoked: string }>(box, ['logout']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.removed).toBe(file);
    expect(out.json.revoked).toMatch(/^[0-9a-f]{12}$/);
    expect(fs.existsSync(file)).toBe(false);
    expect((await api(token, '/api/me')).status).toBe(401);
    const after = await run(box, ['whoami']);
    expect(after.code).toBe(3);
    expectOneLine(after.stderr, /No token found.*htmldrop login.*\[no_token\]/);
  });

  it('a denied sign-in exits 3 and stores nothing', async () => {
    const box = sandbox(service.baseUrl);
    const result = await login(box, 'frank', [], 'deny');
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/denied or expired.*\[device_flow_expired\]/);
    expect(fs.existsSync(path.join(box.home, '.config', 'htmldrop', 'token'))).toBe(false);
  });

  it('Ctrl-C while waiting cancels the sign-in with exit 130', async () => {
    const box = sandbox(service.baseUrl);
    const child = spawnCli(box, ['login']);
    let stderr = '';
    let sent = false;
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (!sent && stderr.includes('Waiting for approval')) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(130);
    expect(stderr).toMatch(/\nhtmldrop: Sign-in was cancelled\. \[aborted\]\n$/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('login --no-wait prints the code and poll token; --poll-token finishes it', async () => {
    const box = sandbox(service.baseUrl);
    const started = await runJson<{ code: string; verification_url: string; poll_token: string }>(box, [
      'login',
      '--no-wait',
    ]);
    expect(started.code, started.stderr).toBe(0);
    await approveDeviceCode(started.json.verification_url, 'gina');
    const done = await runJson<Me>(box, ['login', '--poll-token', started.json.poll_token]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.json.login).toBe('gina');
  });
});
