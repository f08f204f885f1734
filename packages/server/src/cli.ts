#!/usr/bin/env node
/**
 * htmldrop-server: the service and its operator commands. Reads the same environment as the server (same database).
 *
 *   htmldrop-server [serve]
 *   htmldrop-server token create --user <login|user_id> [--label <text>]
 *   htmldrop-server token revoke <id>
 *   htmldrop-server user list
 *   htmldrop-server migrate
 *   htmldrop-server migrate-data --from <sqlite file> --to postgres://...
 *   htmldrop-server secret rotate
 *   htmldrop-server export --user <login|user_id> [-o <file>]
 *   htmldrop-server import --user <login|user_id> <file>
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { ensureAccount, issueToken } from './domain/accounts.js';
import { systemClock } from './domain/clock.js';
import { TOKEN_ID_PATTERN } from './domain/ids.js';
import type { Store } from './domain/store.js';
import type { Account } from './domain/types.js';
import { rotateSecretFile } from './keys/signing-keys.js';
import { serve } from './server.js';
import { openStore } from './storage/index.js';

const USAGE = `Usage:
  htmldrop-server [serve]                                   run the service
  htmldrop-server token create --user <login> [--label <t>] mint a token (prints it); creates the account if new
  htmldrop-server token revoke <id>                         revoke a token by its 12-hex id
  htmldrop-server user list                                 list accounts (tab-separated)
  htmldrop-server migrate                                   apply database migrations and exit
  htmldrop-server migrate-data --from <sqlite file> --to <postgres url>
                                                            copy a SQLite deployment into an empty PostgreSQL
  htmldrop-server secret rotate                             new signing secret in <data dir>/secret.key; the old one
                                                            keeps verifying until the next rotation
  htmldrop-server export --user <login> [-o <file>]         an account's drops as one zip (docs/api.md, "Export and
                                                            import"), to <file> or to stdout
  htmldrop-server import --user <login> <file>              an export's drops into the account (created if new);
                                                            prints what was imported and skipped (JSON)
Environment: see docs/operating.md, "Configuration" (PORT, HOST, HTMLDROP_DATA_DIR, HTMLDROP_DATABASE_URL, ...).`;

class UsageError extends Error {}

/**
 * The account for `--user`: a user_id (`u_...`), else the one account with that login under any provider,
 * else a new account for the `local` identity with that login.
 */
async function resolveUser(store: Store, user: string, create = true): Promise<Account> {
  if (/^u_[0-9A-Za-z]{16}$/.test(user)) {
    const account = await store.findAccount(user);
    if (account === undefined) throw new UsageError(`no account with user_id ${user}`);
    return account;
  }
  if (!/^[\w.@+-]{1,100}$/.test(user))
    throw new UsageError(`--user must be a login of [A-Za-z0-9_.@+-], got "${user}"`);
  const matches = await store.findAccountsByLogin(user);
  if (matches.length > 1) {
    const ids = matches.map((a) => `${a.id} (${a.provider})`).join(', ');
    throw new UsageError(`login "${user}" exists under several providers: ${ids}; pass --user <user_id>`);
  }
  if (matches[0] === undefined && !create) throw new UsageError(`no account with login "${user}"`);
  return matches[0] ?? ensureAccount({ store, clock: systemClock }, { provider: 'local', subject: user, login: user });
}

async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig());
  try {
    await store.migrate();
    return await work(store);
  } finally {
    await store.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const [command = 'serve', sub, ...rest] = argv;
  if (command === 'serve') return serve();
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return;
  }
  if (command === 'migrate') {
    await withStore(async () => undefined);
    console.error('migrations applied');
    return;
  }
  if (command === 'migrate-data') {
    const { values } = parseArgs({
      args: [sub, ...rest].filter((a): a is string => a !== undefined),
      options: { from: { type: 'string' }, to: { type: 'string' } },
    });
    if (values.from === undefined || values.to === undefined || !/^postgres(ql)?:\/\//.test(values.to)) {
      throw new UsageError('migrate-data needs --from <sqlite file> --to postgres://...');
    }
    const { migrateData } = await import('./storage/migrate-data.js');
    const reports = await migrateData(values.from, values.to, (line) => console.error(line));
    const total = reports.reduce((n, r) => n + r.rows, 0);
    console.log(`migrated and verified ${total} rows in ${reports.length} tables`);
    return;
  }
  if (command === 'token' && sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, label: { type: 'string' } } });
    if (values.user === undefined) throw new UsageError('token create needs --user <login>');
    const user = values.user;
    const token = await withStore(async (store) => {
      const account = await resolveUser(store, user);
      return (await issueToken(store, systemClock, account.id, values.label ?? null)).token;
    });
    console.log(token);
    return;
  }
  if (command === 'token' && sub === 'revoke') {
    const id = rest[0];
    if (id === undefined || !new RegExp(TOKEN_ID_PATTERN).test(id))
      throw new UsageError('token revoke needs a 12-hex token id');
    const revoked = await withStore((store) => store.revokeToken(id, undefined, Date.now()));
    if (!revoked) throw new UsageError(`no active token with id ${id}`);
    console.error(`revoked ${id}`);
    return;
  }
  if (command === 'secret' && sub === 'rotate') {
    const config = loadConfig();
    if (config.secret !== undefined) {
      throw new UsageError(
        'HTMLDROP_SECRET is set, so the key file is not used: rotate by moving its value to HTMLDROP_SECRET_PREVIOUS and setting a new HTMLDROP_SECRET on every instance',
      );
    }
    const file = rotateSecretFile(config.dataDir);
    console.error(`rotated ${file}: restart the service to sign with the new secret (the old one keeps verifying)`);
    return;
  }
  if (command === 'export' || command === 'import') return portability(command, [sub, ...rest]);
  if (command === 'user' && sub === 'list') {
    const accounts = await withStore((store) => store.listAccounts());
    console.log(['user_id', 'provider', 'login', 'drops', 'created_at'].join('\t'));
    for (const a of accounts) {
      console.log([a.id, a.provider, a.login, a.dropCount, new Date(a.createdAt).toISOString()].join('\t'));
    }
    return;
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`);
}

/**
 * `export` and `import` for an operator (docs/operating.md, "Moving an account"): the same domain functions as
 * `GET /api/export` and `POST /api/import`, on the configured database, without a token or the write budget.
 */
async function portability(command: 'export' | 'import', argv: Array<string | undefined>): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv.filter((a): a is string => a !== undefined),
    options: { user: { type: 'string' }, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
  });
  if (values.user === undefined) throw new UsageError(`${command} needs --user <login>`);
  const user = values.user;
  const config = loadConfig();
  const { limits } = config;
  if (command === 'export') {
    if (values.output === undefined && process.stdout.isTTY) {
      throw new UsageError('export writes a zip: give -o <file>, or redirect stdout to a file');
    }
    const [{ exportEntries }, { zipStream }] = await Promise.all([
      import('./domain/export.js'),
      import('./portability/zip-writer.js'),
    ]);
    await withStore(async (store) => {
      const account = await resolveUser(store, user, false);
      const zip = zipStream(await exportEntries({ store, clock: systemClock, limits }, account.id));
      if (values.output === undefined) return pipeline(zip, process.stdout);
      const part = `${values.output}.part`;
      try {
        await pipeline(zip, createWriteStream(part));
        await rename(part, values.output);
      } catch (error) {
        await rm(part, { force: true });
        throw error;
      }
      console.error(`exported the drops of ${account.login} (${account.id}) to ${values.output}`);
    });
    return;
  }
  const file = positionals[0];
  if (file === undefined) throw new UsageError('import needs the zip file: import --user <login> <file>');
  const [{ importArchive }, { openArchive }, { createScanner }] = await Promise.all([
    import('./domain/import.js'),
    import('./portability/archive.js'),
    import('./scan/scanner.js'),
  ]);
  const result = await withStore(async (store) => {
    const account = await resolveUser(store, user);
    const archive = await openArchive(file, limits);
    try {
      const scan = { scanner: createScanner(), mode: config.scan, store };
      return await importArchive({ store, clock: systemClock, limits, scan }, account.id, archive);
    } finally {
      archive.close();
    }
  });
  console.log(JSON.stringify(result, null, 2));
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    console.error(`htmldrop-server: ${(error as Error).message}`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      console.error(USAGE);
    process.exit(2);
  }
  console.error(`htmldrop-server: ${(error as Error).message}`);
  process.exit(1);
}
