/** Token resolution order, file permissions, and how token files are written. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HtmlDropError } from '../src/errors.js';
import { describeTokenSource, explainTokenError, signInAgainAdvice } from '../src/token-messages.js';
import {
  projectTokenPath,
  readTokenFile,
  requireToken,
  resolveToken,
  userTokenPath,
  writeProjectToken,
  writeTokenFile,
} from '../src/token-store.js';
import { tempDir } from './run.js';

const token = (c: string) => `hd_${c.repeat(38)}`;
let home: string;
let cwd: string;

beforeEach(() => {
  home = tempDir('htmldrop-home-');
  cwd = tempDir('htmldrop-cwd-');
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(cwd, { recursive: true, force: true });
});

describe('resolveToken', () => {
  it('follows docs/api.md, "Client token lookup": --token, ./.htmldrop/token, HTMLDROP_TOKEN, ~/.config/htmldrop/token', async () => {
    await writeTokenFile(userTokenPath(home), token('u'));
    await writeProjectToken(cwd, token('p'));
    const env = { HTMLDROP_TOKEN: token('e') };
    expect(await resolveToken({ flag: token('f'), cwd, home, env })).toEqual({
      token: token('f'),
      source: 'flag',
      origin: '--token',
    });
    expect(await resolveToken({ cwd, home, env })).toMatchObject({
      token: token('p'),
      source: 'project',
      path: projectTokenPath(cwd),
    });
    fs.rmSync(projectTokenPath(cwd));
    expect(await resolveToken({ cwd, home, env })).toMatchObject({ token: token('e'), source: 'env' });
    expect(await resolveToken({ cwd, home, env: { HTMLDROP_TOKEN: '  ' } })).toMatchObject({
      token: token('u'),
      source: 'user',
    });
    fs.rmSync(userTokenPath(home));
    expect(await resolveToken({ cwd, home, env: {} })).toBeUndefined();
    await expect(requireToken({ cwd, home, env: {} })).rejects.toMatchObject({ code: 'no_token' });
  });

  it('refuses a token file that group or others can read, like ssh does', async () => {
    const file = userTokenPath(home);
    await writeTokenFile(file, token('u'));
    for (const mode of [0o640, 0o604, 0o666]) {
      fs.chmodSync(file, mode);
      await expect(readTokenFile(file)).rejects.toMatchObject({
        code: 'token_file_permissions',
        message: expect.stringContaining(`chmod 600 ${file}`),
      });
    }
    fs.chmodSync(file, 0o400);
    expect(await readTokenFile(file)).toBe(token('u'));
  });

  it('refuses garbage in a token file, in HTMLDROP_TOKEN and in --token', async () => {
    const file = userTokenPath(home);
    for (const content of ['', 'hello', '{"token":"hd_x"}', `${token('a')}\n${token('b')}`]) {
      await writeTokenFile(file, token('a'));
      fs.writeFileSync(file, content);
      await expect(readTokenFile(file)).rejects.toMatchObject({ code: 'invalid_token' });
    }
    await expect(resolveToken({ cwd, home, env: { HTMLDROP_TOKEN: 'sk-123' } })).rejects.toMatchObject({
      code: 'invalid_token',
      message: expect.stringContaining('HTMLDROP_TOKEN'),
    });
    await expect(resolveToken({ flag: 'x', cwd, home, env: {} })).rejects.toMatchObject({ code: 'invalid_token' });
  });
});

describe('writeTokenFile', () => {
  it('writes 0600 in a 0700 directory whatever the umask, replacing an old token atomically', async () => {
    const old = process.umask(0);
    try {
      const file = userTokenPath(home);
      await writeTokenFile(file, token('a'));
      await writeTokenFile(file, token('b'));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(fs.readFileSync(file, 'utf8')).toBe(`${token('b')}\n`);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['token']);
    } finally {
      process.umask(old);
    }
  });

  it('tightens an existing directory that was too open', async () => {
    const dir = path.join(home, '.config', 'htmldrop');
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    await writeTokenFile(userTokenPath(home), token('a'));
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe('token messages', () => {
  it('name each source, and how to replace a token from it', () => {
    const project = projectTokenPath(cwd);
    const user = userTokenPath(home);
    expect(describeTokenSource({ source: 'flag' })).toBe('the --token flag');
    expect(describeTokenSource({ source: 'env' })).toBe('the HTMLDROP_TOKEN environment variable');
    expect(describeTokenSource({ source: 'project', path: project })).toBe(`the file ${project}`);
    expect(describeTokenSource({ source: 'user', path: user })).toBe(`the file ${user}`);
    expect(signInAgainAdvice({ source: 'project', path: project })).toBe(
      `Run \`htmldrop login --project\` in ${path.resolve(cwd)} to sign in again; it replaces that file.`,
    );
    expect(signInAgainAdvice({ source: 'user', path: user })).toBe(
      'Run `htmldrop login` to sign in again; it replaces that file.',
    );
  });

  it('explain a 401 invalid_token or unauthorized for the token in use, and nothing else', async () => {
    await writeTokenFile(userTokenPath(home), token('u'));
    const resolved = await requireToken({ cwd, home, env: {} });
    const unauthorized = new HtmlDropError('unauthorized', 'Authentication is required.', {
      status: 401,
      requestId: 'r1',
    });
    expect(explainTokenError(unauthorized, resolved)).toMatchObject({
      code: 'unauthorized',
      status: 401,
      requestId: 'r1',
      message: `The service did not accept the token from the file ${userTokenPath(home)}. Run \`htmldrop login\` to sign in again; it replaces that file.`,
      details: { token_source: userTokenPath(home) },
    });
    const invalid = new HtmlDropError('invalid_token', 'The token is not valid.', { status: 401 });
    expect(explainTokenError(invalid, undefined)).toBe(invalid);
    const notFound = new HtmlDropError('not_found', 'No such drop.', { status: 404 });
    expect(explainTokenError(notFound, resolved)).toBe(notFound);
    // Raised before anything was sent (a malformed token): already worded where it was found.
    const local = new HtmlDropError('invalid_token', 'The token from ...');
    expect(explainTokenError(local, resolved)).toBe(local);
  });
});
