/**
 * The storage conformance suite: the Store contract, run against every dialect on a real database
 * (SQLite file; PostgreSQL schema). Atomicity claims of store.ts are exercised with concurrent calls.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, openMigrated, type TestDatabase } from '../../test/databases.js';
import { newContentLabel } from '../domain/content-origin.js';
import type { NewComment, NewDrop, NewFile, Store } from '../domain/store.js';
import type { Account, ViewBatch } from '../domain/types.js';
import type { Database } from './schema.js';

const T0 = Date.UTC(2026, 10, 21, 12);

for (const dialect of DIALECTS) {
  describe(`Store on ${dialect}`, () => {
    let database: TestDatabase;
    let store: Store;
    let account: Account;
    let n = 0;
    /** The same database under the store, to look at stored bodies. */
    let raw: Kysely<Database>;

    beforeAll(async () => {
      database = await createTestDatabase(dialect);
      store = database.open();
      await store.migrate();
      account = await store.ensureAccount(
        { provider: 'local', subject: 'ann', login: 'ann' },
        'u_ann0000000000000',
        T0,
      );
      raw = await openMigrated(database);
    });
    afterAll(async () => {
      await raw.destroy();
      await store.close();
      await database.drop();
    });

    const newDrop = (accountId: string, overrides: Partial<NewDrop> = {}): NewDrop => ({
      slug: `s${dialect[0]}${(n++).toString().padStart(8, '0')}`,
      accountId,
      title: 't',
      description: null,
      html: '<p>x</p>',
      sizeBytes: 8,
      contentLabel: newContentLabel(),
      context: null,
      metadata: {},
      passcodeHash: null,
      now: T0 + n,
      ...overrides,
    });

    it('migrates idempotently, also when several instances start at once', async () => {
      const others = [database.open(), database.open(), database.open()];
      await Promise.all(others.map((s) => s.migrate()));
      await store.migrate();
      await Promise.all(others.map((s) => s.close()));
    });

    it('answers a ping while open, and refuses it once closed', async () => {
      const other = database.open();
      await expect(other.ping()).resolves.toBeUndefined();
      await other.close();
      await expect(other.ping()).rejects.toThrow();
    });

    it('binds one account to one identity, even under concurrent first sign-ins', async () => {
      const results = await Promise.all(
        ['u_aaaaaaaaaaaaaaaa', 'u_bbbbbbbbbbbbbbbb', 'u_cccccccccccccccc'].map((id) =>
          store.ensureAccount({ provider: 'github', subject: '42', login: 'octo' }, id, T0),
        ),
      );
      expect(new Set(results.map((a) => a.id)).size).toBe(1);
    });

    it('creates drops atomically with the quota', async () => {
      const owner = await store.ensureAccount(
        { provider: 'local', subject: 'quota', login: 'quota' },
        'u_quota0000000000',
        T0,
      );
      const created = await Promise.all(Array.from({ length: 20 }, () => store.createDrop(newDrop(owner.id), 3)));
      expect(created.filter((d) => d !== undefined)).toHaveLength(3);
      expect((await store.findAccount(owner.id))?.dropCount).toBe(3);
      expect(
        (
          await store.listDrops(owner.id, {
            page: 1,
            pageSize: 50,
            sortBy: 'created_at',
            sortOrder: 'desc',
            metadata: {},
          })
        ).total,
      ).toBe(3);
    });

    it('numbers versions from the highest ever issued, atomically with the cap', async () => {
      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      const version = { html: '<p>v</p>', sizeBytes: 8, context: null, now: T0 };
      const results = await Promise.all(Array.from({ length: 10 }, () => store.appendVersion(slug, version, {}, 5)));
      const appended = results.filter((r) => typeof r === 'object');
      expect(appended).toHaveLength(4);
      expect(results.filter((r) => r === 'version_limit')).toHaveLength(6);
      expect((await store.listVersions(slug)).map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
      expect(await store.deleteVersion(slug, 5, T0)).toMatchObject({ latestVersion: 4, versionCount: 4 });
      expect(await store.appendVersion(slug, version, {}, 5)).toMatchObject({ latestVersion: 6 });
      expect(await store.appendVersion('nope', version, {}, 5)).toBe('not_found');
    });

    it('keeps at least one version under concurrent deletes', async () => {
      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      await store.appendVersion(slug, { html: 'x', sizeBytes: 1, context: null, now: T0 }, {}, 10);
      const results = await Promise.all([1, 2, 1, 2].map((v) => store.deleteVersion(slug, v, T0)));
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(1);
      expect(await store.listVersions(slug)).toHaveLength(1);
      expect(await store.deleteVersion(slug, 99, T0)).toBe('version_not_found');
      expect(await store.deleteVersion('nope', 1, T0)).toBe('not_found');
    });

    it('filters by metadata with AND and sorts with a stable tie-breaker', async () => {
      const owner = await store.ensureAccount(
        { provider: 'local', subject: 'tags', login: 'tags' },
        'u_tags00000000000',
        T0,
      );
      const tagSets: Array<Record<string, string>> = [
        { a: '1', b: 'x' },
        { a: '1', b: 'y' },
        { a: '2' },
        { 'k.e-y_': 'v' },
      ];
      for (const [i, metadata] of tagSets.entries()) {
        await store.createDrop(newDrop(owner.id, { metadata, now: T0 + i }), 100);
      }
      const list = (metadata: Record<string, string>) =>
        store.listDrops(owner.id, { page: 1, pageSize: 10, sortBy: 'created_at', sortOrder: 'asc', metadata });
      expect((await list({ a: '1' })).total).toBe(2);
      expect((await list({ a: '1', b: 'y' })).items.map((d) => d.metadata)).toEqual([{ a: '1', b: 'y' }]);
      expect((await list({ 'k.e-y_': 'v' })).total).toBe(1);
      expect((await list({ zzz: '1' })).total).toBe(0);
      const page2 = await store.listDrops(owner.id, {
        page: 2,
        pageSize: 3,
        sortBy: 'view_count',
        sortOrder: 'desc',
        metadata: {},
      });
      expect(page2.items).toHaveLength(1);
    });

    it('filters by a title substring, ignoring case and matching %, _ and \\ literally', async () => {
      const owner = await store.ensureAccount(
        { provider: 'local', subject: 'titles', login: 'titles' },
        'u_titles000000000',
        T0,
      );
      const drops: Array<[string, Record<string, string>]> = [
        ['Quarterly Report', { kind: 'finance' }],
        ['quarterly budget', { kind: 'finance' }],
        ['Annual REPORT', { kind: 'summary' }],
        ['100% done', {}],
        ['100 percent', {}],
        ['a_b', {}],
        ['axb', {}],
        ['back\\slash', {}],
        ['backxslash', {}],
      ];
      for (const [i, [title, metadata]] of drops.entries()) {
        await store.createDrop(newDrop(owner.id, { title, metadata, now: T0 + i }), 100);
      }
      const list = (
        titleContains: string | undefined,
        metadata: Record<string, string> = {},
        page = 1,
        pageSize = 20,
      ) =>
        store.listDrops(owner.id, { page, pageSize, sortBy: 'created_at', sortOrder: 'asc', metadata, titleContains });
      const titles = async (titleContains: string, metadata: Record<string, string> = {}) =>
        (await list(titleContains, metadata)).items.map((d) => d.title);

      expect(await titles('report')).toEqual(['Quarterly Report', 'Annual REPORT']);
      expect(await titles('QUARTERLY')).toEqual(['Quarterly Report', 'quarterly budget']);
      expect(await titles('100%')).toEqual(['100% done']);
      expect(await titles('%')).toEqual(['100% done']);
      expect(await titles('a_b')).toEqual(['a_b']);
      expect(await titles('_')).toEqual(['a_b']);
      expect(await titles('k\\s')).toEqual(['back\\slash']);
      expect(await titles('nothing like it')).toEqual([]);
      expect((await list('')).total).toBe(drops.length);
      expect((await list(undefined)).total).toBe(drops.length);

      expect(await titles('report', { kind: 'finance' })).toEqual(['Quarterly Report']);
      expect(await titles('budget', { kind: 'summary' })).toEqual([]);

      const page2 = await list('RePoRt', {}, 2, 1);
      expect(page2.total).toBe(2);
      expect(page2.items.map((d) => d.title)).toEqual(['Annual REPORT']);
      const page3 = await list('report', {}, 3, 1);
      expect(page3.total).toBe(2);
      expect(page3.items).toEqual([]);
    });

    const comment = (slug: string, id: string, overrides: Partial<NewComment> = {}): NewComment => ({
      id,
      slug,
      version: undefined,
      body: id,
      quote: null,
      authorName: 'g',
      authorKind: 'guest',
      authorAccountId: null,
      now: T0,
      ...overrides,
    });

    it('gives one owner’s comments strictly increasing times in commit order, across drops, after deletes too', async () => {
      const owner = await store.ensureAccount({ provider: 'local', subject: 'clock', login: 'clock' }, 'u_clock', T0);
      const slugs = await Promise.all(
        [0, 1, 2, 3].map(async () => (await store.createDrop(newDrop(owner.id), 10))?.slug),
      );
      const added = await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.addComment(comment(slugs[i % 4] ?? '', `c_clk${dialect}${i}`), 100)),
      );
      const times = added.map((c) => (typeof c === 'string' ? -1 : c.createdAt));
      expect(new Set(times).size).toBe(40);
      expect(Math.min(...times)).toBe(T0);
      // The newest deleted, the clock does not move back: the next comment is still after everything seen.
      const newest = Math.max(...times);
      const last = added.find((c) => typeof c !== 'string' && c.createdAt === newest);
      if (last === undefined || typeof last === 'string') throw new Error('no newest comment');
      expect(await store.deleteComment(last.slug, last.id)).toBe(true);
      const after = await store.addComment(comment(slugs[0] ?? '', `c_clk${dialect}next`), 100);
      expect(after).toMatchObject({ createdAt: newest + 1 });
    });

    it('pages a drop’s comments newest first with exact totals, and deletes many in one call', async () => {
      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      await store.appendVersion(slug, { html: '<p>2</p>', sizeBytes: 8, context: null, now: T0 }, {}, 100);
      const made = [];
      for (let i = 0; i < 7; i++) {
        const kind = i % 3 === 0 ? ('owner' as const) : ('guest' as const);
        const added = await store.addComment(
          comment(slug, `c_pg${dialect}${i}`, { version: i < 4 ? 1 : 2, authorKind: kind, now: T0 + i }),
          100,
        );
        if (typeof added === 'string') throw new Error(added);
        made.push(added);
      }
      await store.resolveComments(slug, [made[1]?.id ?? '', made[5]?.id ?? ''], 2, T0 + 10);
      const ids = (page: { comments: readonly { id: string }[] }) => page.comments.map((c) => c.id);
      const first = await store.pageComments({ slug }, 3);
      expect(ids(first)).toEqual([6, 5, 4].map((i) => `c_pg${dialect}${i}`));
      expect(first.total).toBe(7);
      const next = await store.pageComments({ slug, before: first.comments[2]?.createdAt ?? 0 }, 3);
      expect(ids(next)).toEqual([3, 2, 1].map((i) => `c_pg${dialect}${i}`));
      expect(next.total).toBe(7);
      expect((await store.pageComments({ slug, version: 1 }, 10)).total).toBe(4);
      // Resolved in v2 and made on another version: only the one made on v1.
      expect(ids(await store.pageComments({ slug, resolvedIn: 2 }, 10))).toEqual([`c_pg${dialect}1`]);
      expect((await store.pageComments({ slug, open: true }, 0)).total).toBe(5);
      expect(await store.pageComments({ slug, authorKind: 'guest' }, 0)).toEqual({ comments: [], total: 4 });

      const other = (await store.createDrop(newDrop(account.id), 1000))?.slug ?? '';
      const elsewhere = await store.addComment(comment(other, `c_pg${dialect}x`), 100);
      const foreign = typeof elsewhere === 'string' ? '' : elsewhere.id;
      // Ids of another drop are not deleted through this one.
      expect(await store.deleteComments(slug, { ids: [`c_pg${dialect}0`, foreign, 'c_none'] })).toBe(1);
      expect(await store.deleteComments(slug, { ids: [] })).toBe(0);
      expect(await store.deleteComments(slug, { authorKind: 'guest' })).toBe(4);
      expect((await store.pageComments({ slug }, 10)).comments.map((c) => c.author.kind)).toEqual(['owner', 'owner']);
      expect((await store.pageComments({ slug: other }, 10)).total).toBe(1);
    });

    it('keeps the per-drop cap for others only, under concurrent comments; the owner is never refused', async () => {
      const slug = (await store.createDrop(newDrop(account.id), 1000))?.slug ?? '';
      const results = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => store.addComment(comment(slug, `c_cap${dialect}${i}`), 3)),
        ...Array.from({ length: 3 }, (_, i) =>
          store.addComment(comment(slug, `c_capo${dialect}${i}`, { authorKind: 'owner' }), 3),
        ),
      ]);
      expect(results.slice(0, 6).filter((r) => r === 'comment_limit')).toHaveLength(3);
      expect(results.slice(6).every((r) => typeof r !== 'string')).toBe(true);
      expect(await store.addComment(comment(slug, `c_capm${dialect}`, { authorKind: 'member' }), 3)).toBe(
        'comment_limit',
      );
    });

    it('counts rate windows all-or-nothing and never above the limit', async () => {
      const windows = [
        { key: `${dialect}:m`, limit: 5, endsAt: T0 + 60_000 },
        { key: `${dialect}:d`, limit: 7, endsAt: T0 + 86_400_000 },
      ];
      const results = await Promise.all(Array.from({ length: 12 }, () => store.hitRateWindows(windows)));
      expect(results.filter((r) => r.exceeded === undefined)).toHaveLength(5);
      expect(results.filter((r) => r.exceeded === 0)).toHaveLength(7);
      await store.releaseRateWindow(`${dialect}:m`);
      expect((await store.hitRateWindows(windows)).exceeded).toBeUndefined();
      expect((await store.hitRateWindows(windows)).exceeded).toBe(0);
      await store.purgeExpired(T0 + 60_000, 0);
      expect((await store.hitRateWindows(windows)).exceeded).toBeUndefined();
    });

    it('hands every caller the same setting, the first stored', async () => {
      const values = await Promise.all(['a', 'b', 'c', 'd'].map((v) => store.ensureSetting(`${dialect}-key`, v)));
      expect(new Set(values).size).toBe(1);
    });

    it('claims an approved device request exactly once', async () => {
      await store.createDeviceRequest({
        id: `dr-${dialect}`,
        pollHash: `ph-${dialect}`,
        userCode: 'ABCDEFGH',
        label: 'l',
        now: T0,
        expiresAt: T0 + 600_000,
      });
      expect(
        await store.createDeviceRequest({
          id: `dr2-${dialect}`,
          pollHash: `ph2-${dialect}`,
          userCode: 'ABCDEFGH',
          label: null,
          now: T0,
          expiresAt: T0 + 600_000,
        }),
      ).toBe(false);
      expect(await store.decideDeviceRequest('ABCDEFGH', { approve: account.id }, T0 + 1)).toBe(true);
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.claimDeviceRequest(
            `ph-${dialect}`,
            { id: `tok${dialect}${i}`.padEnd(12, '0').slice(0, 12), hash: `hash-${dialect}-${i}` },
            T0 + 2,
          ),
        ),
      );
      expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
      expect((await store.findDeviceRequestByPollHash(`ph-${dialect}`))?.state).toBe('claimed');
    });

    it('redeems an OAuth code once among concurrent exchanges; a replay revokes its token; the purge forgets', async () => {
      const clientId = `hdc_${dialect}`;
      await store.registerOAuthClient({
        id: clientId,
        name: 'Agent',
        redirectUris: ['http://127.0.0.1:9/cb'],
        metadata: { client_name: 'Agent' },
        createdAt: T0,
      });
      expect(await store.findOAuthClient(clientId)).toMatchObject({
        name: 'Agent',
        redirectUris: ['http://127.0.0.1:9/cb'],
      });
      const code = { clientId, accountId: account.id, codeChallenge: 'c', redirectUri: 'http://127.0.0.1:9/cb' };
      await store.createOAuthCode({ hash: `oc-${dialect}`, ...code, resource: null, now: T0, expiresAt: T0 + 60_000 });
      const token = (i: number) => ({
        id: `oa${dialect}${i}`.padEnd(12, '0').slice(0, 12),
        hash: `oah-${dialect}-${i}`,
        label: 'Agent',
        expiresAt: T0 + 3_600_000,
        refreshHash: `oar-${dialect}-${i}`,
        refreshExpiresAt: T0 + 86_400_000,
      });
      const redeemed = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.redeemOAuthCode(`oc-${dialect}`, clientId, token(i), T0 + 1)),
      );
      const issued = redeemed.filter((r) => r.kind === 'issued');
      expect(issued).toHaveLength(1);
      // The losers of the race saw a used code: the winner's token is revoked, as for any replay.
      expect(redeemed.filter((r) => r.kind === 'replayed')).toHaveLength(7);
      const active = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.findActiveToken(`oah-${dialect}-${i}`)),
      );
      expect(active.filter((t) => t !== undefined)).toHaveLength(0);
      expect(await store.redeemOAuthCode('unknown', clientId, token(9), T0 + 1)).toEqual({ kind: 'invalid' });

      await store.createOAuthCode({ hash: `oc2-${dialect}`, ...code, resource: null, now: T0, expiresAt: T0 + 60_000 });
      expect(await store.redeemOAuthCode(`oc2-${dialect}`, clientId, token(10), T0 + 60_000)).toEqual({
        kind: 'invalid',
      });
      await store.purgeOAuth({ codesBefore: T0 + 60_001, unusedClientsBefore: T0 + 1, tokensBefore: T0 });
      expect(await store.findOAuthCode(`oc2-${dialect}`)).toBeUndefined();
      // Used (a code was issued for it): kept.
      expect(await store.findOAuthClient(clientId)).toBeDefined();
    });

    it('rotates a refresh token once among concurrent exchanges; the losers end the grant, or renew within a grace; revocation; purge', async () => {
      const clientId = `hdc_rot_${dialect}`;
      await store.registerOAuthClient({ id: clientId, name: 'Rot', redirectUris: [], metadata: {}, createdAt: T0 });
      const pair = (name: string, at: number) => ({
        id: `${name}${dialect}`.padEnd(12, '0').slice(0, 12),
        hash: `ah-${name}-${dialect}`,
        expiresAt: at + 3_600_000,
        refreshHash: `rh-${name}-${dialect}`,
        refreshExpiresAt: at + 86_400_000,
      });
      const code = { clientId, accountId: account.id, codeChallenge: 'c', redirectUri: 'x', resource: null };
      const grant = async (name: string) => {
        await store.createOAuthCode({ hash: `c-${name}-${dialect}`, ...code, now: T0, expiresAt: T0 + 60_000 });
        const issued = await store.redeemOAuthCode(
          `c-${name}-${dialect}`,
          clientId,
          { ...pair(name, T0), label: 'Rot' },
          T0,
        );
        expect(issued.kind).toBe('issued');
      };
      await grant('ra');
      expect((await store.findActiveToken(`ah-ra-${dialect}`))?.token).toMatchObject({
        expiresAt: T0 + 3_600_000,
        oauthClient: { id: clientId, name: 'Rot' },
        renewableUntil: T0 + 86_400_000,
      });

      // Without a grace period, one of eight concurrent exchanges of one refresh token wins; the others are
      // reuses, which end the grant.
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.refreshOAuthToken(`rh-ra-${dialect}`, clientId, pair(`rb${i}`, T0 + 1), T0 + 1, 0),
        ),
      );
      expect(outcomes.filter((o) => o.kind === 'issued')).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'reused')).toHaveLength(7);
      const live = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.findActiveToken(`ah-rb${i}-${dialect}`)),
      );
      expect(live.filter((t) => t !== undefined)).toHaveLength(0);
      expect(await store.findActiveToken(`ah-ra-${dialect}`)).toBeUndefined();

      // A clean rotation: the old row is spent, the successor keeps the label and the grant.
      await grant('rc');
      expect(await store.refreshOAuthToken(`rh-rc-${dialect}`, clientId, pair('rd', T0 + 2), T0 + 2, 0)).toEqual({
        kind: 'issued',
        accountId: account.id,
      });
      expect(await store.findActiveToken(`ah-rc-${dialect}`)).toBeUndefined();
      expect((await store.findActiveToken(`ah-rd-${dialect}`))?.token.label).toBe('Rot');
      expect(await store.refreshOAuthToken('rh-unknown', clientId, pair('re', T0), T0, 0)).toEqual({
        kind: 'invalid',
      });
      expect(await store.refreshOAuthToken(`rh-rd-${dialect}`, 'hdc_other', pair('re', T0), T0, 0)).toEqual({
        kind: 'invalid',
      });
      expect(await store.refreshOAuthToken(`rh-rd-${dialect}`, clientId, pair('re', T0), T0 + 86_400_002, 0)).toEqual({
        kind: 'expired',
      });

      // RFC 7009: by the refresh token's hash; another client's is refused; then unknown.
      expect(await store.revokeOAuthToken(`rh-rd-${dialect}`, 'hdc_other', T0 + 3)).toBe('foreign');
      expect(await store.revokeOAuthToken(`rh-rd-${dialect}`, clientId, T0 + 3)).toBe('revoked');
      expect(await store.findActiveToken(`ah-rd-${dialect}`)).toBeUndefined();
      expect(await store.revokeOAuthToken(`ah-rd-${dialect}`, clientId, T0 + 3)).toBe('unknown');

      // With a grace period, concurrent exchanges are parallel renewals: every one gets a live pair of the grant.
      await grant('rh');
      const parallel = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          store.refreshOAuthToken(`rh-rh-${dialect}`, clientId, pair(`ri${i}`, T0 + 10), T0 + 10, 1000),
        ),
      );
      expect(parallel.map((o) => o.kind)).toEqual(['issued', 'issued', 'issued', 'issued']);
      for (let i = 0; i < 4; i++) expect(await store.findActiveToken(`ah-ri${i}-${dialect}`)).toBeDefined();
      // Past the grace, the spent token is a reuse again: the grant ends, the parallel pairs with it.
      expect(
        await store.refreshOAuthToken(`rh-rh-${dialect}`, clientId, pair('rj', T0 + 1011), T0 + 1011, 1000),
      ).toEqual({ kind: 'reused' });
      for (let i = 0; i < 4; i++) expect(await store.findActiveToken(`ah-ri${i}-${dialect}`)).toBeUndefined();
      expect(await store.findActiveToken(`ah-rj-${dialect}`)).toBeUndefined();
      // Within the grace, but the grant was revoked meanwhile (here by RFC 7009): it stays ended.
      await grant('rk');
      await store.refreshOAuthToken(`rh-rk-${dialect}`, clientId, pair('rl', T0 + 20), T0 + 20, 1000);
      expect(await store.revokeOAuthToken(`rh-rl-${dialect}`, clientId, T0 + 21)).toBe('revoked');
      expect(await store.refreshOAuthToken(`rh-rk-${dialect}`, clientId, pair('rm', T0 + 22), T0 + 22, 1000)).toEqual({
        kind: 'reused',
      });
      expect(await store.findActiveToken(`ah-rm-${dialect}`)).toBeUndefined();

      // A new grant of the same client and account revokes the one before.
      await grant('rf');
      await grant('rg');
      expect(await store.findActiveToken(`ah-rf-${dialect}`)).toBeUndefined();
      expect(await store.findActiveToken(`ah-rg-${dialect}`)).toBeDefined();

      // Rows whose refresh token expired before the cutoff are deleted, with their spent hashes.
      await store.purgeOAuth({ codesBefore: T0, unusedClientsBefore: T0, tokensBefore: T0 + 86_400_000 + 2000 });
      const rows = await raw.selectFrom('tokens').select('id').where('oauth_client_id', '=', clientId).execute();
      expect(rows).toEqual([]);
    });

    it('records token use without moving it backwards, and adds views', async () => {
      await store.createToken({
        id: `${dialect}tokenid`.slice(0, 12),
        hash: `h-${dialect}`,
        accountId: account.id,
        label: null,
        now: T0,
      });
      const id = `${dialect}tokenid`.slice(0, 12);
      await store.recordTokenUse(new Map([[id, T0 + 100]]));
      await store.recordTokenUse(new Map([[id, T0 + 50]]));
      expect((await store.findActiveToken(`h-${dialect}`))?.token.lastUsedAt).toBe(T0 + 100);
      expect(await store.revokeToken(id, 'u_someoneelse0000', T0)).toBe(false);
      expect(await store.revokeToken(id, account.id, T0)).toBe(true);
      expect(await store.findActiveToken(`h-${dialect}`)).toBeUndefined();

      const drop = await store.createDrop(newDrop(account.id), 1000);
      const slug = drop?.slug ?? '';
      // Read receipts have their own conformance suite (view-stats.test.ts).
      const views = (n: number): ViewBatch =>
        new Map([[slug, new Map([[1, { views: n, firstAt: T0, lastAt: T0, viewers: new Set([`v${n}`]) }]])]]);
      await Promise.all([store.addViews(views(3)), store.addViews(views(4))]);
      expect((await store.findDrop(slug))?.viewCount).toBe(7);
    });

    it('stores HTML byte for byte and serves the latest or a pinned version', async () => {
      const html = '\uFEFF<!doctype html>\r\n<p>é 漢字 😀</p>\t';
      const drop = await store.createDrop(newDrop(account.id, { html }), 1000);
      const slug = drop?.slug ?? '';
      expect((await store.getVersionContent(slug, undefined))?.html).toBe(html);
      await store.appendVersion(slug, { html: 'two', sizeBytes: 3, context: 'why', now: T0 }, { title: 'T2' }, 10);
      expect((await store.getVersionContent(slug, undefined))?.html).toBe('two');
      expect((await store.getVersionContent(slug, 1))?.html).toBe(html);
      expect(await store.getVersion(slug, 2)).toMatchObject({ context: 'why', hasContext: true });
      expect(await store.deleteDrop(slug)).toBe(true);
      expect(await store.getVersionContent(slug, 1)).toBeUndefined();
      expect(await store.deleteDrop(slug)).toBe(false);
    });
    it('keeps each version’s findings with it, in its transaction, and drops them with the version and the drop', async () => {
      const finding = (line: number) =>
        ({ kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'html', line, excerpt: 'AKIA****WW5F' }) as const;
      const drop = await store.createDrop(newDrop(account.id, { warnings: [finding(1)] }), 1000);
      const slug = drop?.slug ?? '';
      await store.appendVersion(slug, { html: 'clean', sizeBytes: 5, context: null, now: T0 }, {}, 10);
      const three = { html: 'three', sizeBytes: 5, context: null, now: T0, warnings: [finding(3), finding(4)] };
      await store.appendVersion(slug, three, {}, 10);
      expect(await store.listVersionWarnings(slug)).toEqual(
        new Map([
          [1, [finding(1)]],
          [3, [finding(3), finding(4)]],
        ]),
      );
      // A refused append (the version cap) keeps nothing.
      expect(await store.appendVersion(slug, { ...three, warnings: [finding(9)] }, {}, 3)).toBe('version_limit');
      expect([...(await store.listVersionWarnings(slug)).keys()]).toEqual([1, 3]);
      await store.deleteVersion(slug, 1, T0);
      expect([...(await store.listVersionWarnings(slug)).keys()]).toEqual([3]);
      expect(await store.deleteDrop(slug)).toBe(true);
      expect(await raw.selectFrom('version_warnings').selectAll().where('slug', '=', slug).execute()).toEqual([]);
    });

    /** The stored body of `html`: its reference count and stored size, or undefined when none is kept. */
    const bodyOf = async (html: string) => {
      const hash = createHash('sha256').update(html, 'utf8').digest('hex');
      const row = await raw
        .selectFrom('bodies')
        .select(['refs', 'codec', 'data', 'size_bytes'])
        .where('hash', '=', hash)
        .executeTakeFirst();
      return row === undefined
        ? undefined
        : { refs: Number(row.refs), codec: row.codec, stored: row.data.length, size: Number(row.size_bytes) };
    };
    const report = (tag: string) =>
      `<!doctype html><title>${tag}</title>${Array.from({ length: 400 }, (_, i) => `<tr><td>${tag} row ${i}</td><td>${(i * 7919) % 1000}</td></tr>`).join('')}`;
    const version = (html: string) => ({ html, sizeBytes: Buffer.byteLength(html), context: null, now: T0 });

    it('stores a body compressed, once for every version that carries the same bytes', async () => {
      const html = report('shared-once');
      const a =
        (await store.createDrop(newDrop(account.id, { html, sizeBytes: Buffer.byteLength(html) }), 1000))?.slug ?? '';
      const b =
        (await store.createDrop(newDrop(account.id, { html, sizeBytes: Buffer.byteLength(html) }), 1000))?.slug ?? '';
      await store.appendVersion(a, version(html), {}, 10);
      const body = await bodyOf(html);
      expect(body).toMatchObject({ refs: 3, codec: 'br', size: Buffer.byteLength(html) });
      expect(body?.stored).toBeLessThan(Buffer.byteLength(html) / 3);
      for (const [slug, v] of [
        [a, 1],
        [a, 2],
        [b, 1],
      ] as const) {
        expect((await store.getVersionContent(slug, v))?.html).toBe(html);
      }
      expect((await store.listVersions(a)).map((v) => v.sizeBytes)).toEqual([
        Buffer.byteLength(html),
        Buffer.byteLength(html),
      ]);
    });

    it('deleting one of two sharers keeps the body for the other, and the last one frees it', async () => {
      const html = report('two-sharers');
      const other = report('two-sharers-other');
      const a = (await store.createDrop(newDrop(account.id, { html }), 1000))?.slug ?? '';
      const b = (await store.createDrop(newDrop(account.id, { html }), 1000))?.slug ?? '';
      await store.appendVersion(b, version(other), {}, 10);
      expect(await bodyOf(html)).toMatchObject({ refs: 2 });
      expect(await store.deleteDrop(a)).toBe(true);
      expect(await bodyOf(html)).toMatchObject({ refs: 1 });
      expect((await store.getVersionContent(b, 1))?.html).toBe(html);
      expect(await store.deleteVersion(b, 1, T0)).toMatchObject({ latestVersion: 2 });
      expect(await bodyOf(html)).toBeUndefined();
      expect(await bodyOf(other)).toMatchObject({ refs: 1 });
      expect(await store.deleteDrop(b)).toBe(true);
      expect(await bodyOf(other)).toBeUndefined();
    });

    it('counts concurrent writers of the same body exactly, also racing the delete of its last user', async () => {
      const html = report('concurrent');
      const first = (await store.createDrop(newDrop(account.id, { html }), 1000))?.slug ?? '';
      // The only user goes while 8 creates and 4 republishes of the same bytes run: the body must end with exactly
      // the 12 new users, whichever way the race went.
      const [created, , deleted] = await Promise.all([
        Promise.all(Array.from({ length: 8 }, () => store.createDrop(newDrop(account.id, { html }), 1000))),
        Promise.all(Array.from({ length: 4 }, () => store.appendVersion(first, version(html), {}, 100))),
        store.deleteDrop(first),
      ]);
      expect(deleted).toBe(true);
      expect(await bodyOf(html)).toMatchObject({ refs: 8 });
      const slugs = created.map((d) => d?.slug ?? '');
      for (const slug of slugs) expect((await store.getVersionContent(slug, 1))?.html).toBe(html);
      await Promise.all(slugs.map((slug) => store.deleteDrop(slug)));
      expect(await bodyOf(html)).toBeUndefined();
    });
    /** Bytes that brotli cannot shrink, as a PNG's are: random, from a fixed seed (so two calls give the same bytes). */
    const packed = (size: number, seed: number) => {
      const bytes = Buffer.alloc(size);
      let x = seed * 2654435761 + 1;
      for (let i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        bytes[i] = x & 0xff;
      }
      return bytes;
    };
    const png = (bytes: Buffer) => ({ path: 'img/chart.png', contentType: 'image/png', bytes });
    const withFiles = (html: string, files: NewFile[]) => ({ ...version(html), files });
    /** Every stored body: how many, their stored bytes. */
    const storedBodies = async () => {
      const rows = await raw.selectFrom('bodies').select(['hash', 'data', 'refs']).execute();
      return { count: rows.length, bytes: rows.reduce((sum, row) => sum + row.data.length, 0) };
    };

    it('stores a 1 MiB image once for 20 versions that carry it, kept as it is, and frees it with its last user', async () => {
      const image = packed(1_048_576, 20);
      const hash = createHash('sha256').update(image).digest('hex');
      const before = await storedBodies();
      const v1 = { html: '<p>v1 with an image</p>', files: [png(image)] };
      const slug = (await store.createDrop(newDrop(account.id, v1), 1000))?.slug ?? '';
      for (let i = 2; i <= 20; i++) {
        expect(
          await store.appendVersion(slug, withFiles(`<p>v${i} with an image</p>`, [png(image)]), {}, 100),
        ).toMatchObject({
          latestVersion: i,
        });
      }
      const stored = await raw
        .selectFrom('bodies')
        .select(['refs', 'codec', 'size_bytes', 'data'])
        .where('hash', '=', hash)
        .executeTakeFirstOrThrow();
      expect({ refs: Number(stored.refs), codec: stored.codec, size: Number(stored.size_bytes) }).toEqual({
        refs: 20,
        codec: 'identity',
        size: image.length,
      });
      expect(Buffer.from(stored.data).equals(image)).toBe(true);
      const after = await storedBodies();
      // The image once, and 20 small HTML bodies (v1's and 19 others).
      expect(after.count - before.count).toBe(21);
      expect(after.bytes - before.bytes).toBeLessThan(image.length + 21 * 100);
      expect((await store.listVersionFiles(slug, 7)).get(7)).toEqual([
        { path: 'img/chart.png', sizeBytes: image.length, contentType: 'image/png', sha256: hash },
      ]);
      const served = await store.getVersionFile(slug, undefined, 'img/chart.png');
      expect(served?.version).toBe(20);
      expect(served?.bytes.equals(image)).toBe(true);
      for (let i = 1; i < 20; i++) await store.deleteVersion(slug, i, T0);
      expect((await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst())?.refs).toBe(1);
      expect(await store.deleteDrop(slug)).toBe(true);
      expect(await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst()).toBeUndefined();
      expect(await storedBodies()).toEqual(before);
    });

    it("compresses a text file only when that pays, and counts one body for a file equal to another drop's HTML", async () => {
      const css = `body{margin:0}${'.row{display:flex;gap:4px}'.repeat(400)}`;
      const html = report('file-equals-html');
      const slug =
        (
          await store.createDrop(
            newDrop(account.id, {
              files: [
                { path: 'style.css', contentType: 'text/css; charset=utf-8', bytes: Buffer.from(css) },
                { path: 'copy.html', contentType: 'text/html; charset=utf-8', bytes: Buffer.from(html) },
                { path: 'tiny.txt', contentType: 'text/plain; charset=utf-8', bytes: Buffer.from('hi') },
              ],
            }),
            1000,
          )
        )?.slug ?? '';
      const other = (await store.createDrop(newDrop(account.id, { html }), 1000))?.slug ?? '';
      expect(await bodyOf(css)).toMatchObject({ codec: 'br', size: css.length });
      expect((await bodyOf(css))?.stored).toBeLessThan(css.length / 4);
      expect(await bodyOf('hi')).toMatchObject({ codec: 'identity', stored: 2 });
      expect(await bodyOf(html)).toMatchObject({ refs: 2 });
      expect((await store.getVersionFile(slug, 1, 'style.css'))?.bytes.toString()).toBe(css);
      expect(await store.getVersionFile(slug, 1, 'nope.css')).toBeUndefined();
      expect(await store.getVersionFile(slug, 2, 'style.css')).toBeUndefined();
      await store.deleteDrop(slug);
      expect(await bodyOf(css)).toBeUndefined();
      expect(await bodyOf(html)).toMatchObject({ refs: 1 });
      expect((await store.getVersionContent(other, 1))?.html).toBe(html);
      await store.deleteDrop(other);
    });

    it('restores a version with its files by reference, and refuses a restore from a version deleted meanwhile', async () => {
      const image = packed(200_000, 21);
      const hash = createHash('sha256').update(image).digest('hex');
      const slug = (await store.createDrop(newDrop(account.id, { files: [png(image)] }), 1000))?.slug ?? '';
      await store.appendVersion(slug, version('<p>two</p>'), {}, 10);
      expect(await store.appendVersion(slug, { ...version('<p>x</p>'), filesOf: 1 }, {}, 10)).toMatchObject({
        latestVersion: 3,
      });
      expect((await store.listVersionFiles(slug)).get(3)?.map((f) => f.sha256)).toEqual([hash]);
      expect((await store.listVersionFiles(slug)).has(2)).toBe(false);
      expect((await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst())?.refs).toBe(2);
      expect(await store.appendVersion(slug, { ...version('<p>y</p>'), filesOf: 9 }, {}, 10)).toBe('version_not_found');
      expect((await store.listVersions(slug)).map((v) => v.version)).toEqual([3, 2, 1]);
      await store.deleteDrop(slug);
      expect(await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst()).toBeUndefined();
    });

    it('counts concurrent writers of one file exactly, also racing the delete of its last user', async () => {
      const image = packed(300_000, 22);
      const hash = createHash('sha256').update(image).digest('hex');
      const first = (await store.createDrop(newDrop(account.id, { files: [png(image)] }), 1000))?.slug ?? '';
      const [created, , deleted] = await Promise.all([
        Promise.all(
          Array.from({ length: 8 }, () => store.createDrop(newDrop(account.id, { files: [png(image)] }), 1000)),
        ),
        Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            store.appendVersion(first, withFiles(`<p>${i}</p>`, [png(image)]), {}, 100),
          ),
        ),
        store.deleteDrop(first),
      ]);
      expect(deleted).toBe(true);
      expect((await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst())?.refs).toBe(8);
      const slugs = created.map((d) => d?.slug ?? '');
      for (const slug of slugs)
        expect((await store.getVersionFile(slug, 1, 'img/chart.png'))?.bytes.equals(image)).toBe(true);
      await Promise.all(slugs.map((slug) => store.deleteDrop(slug)));
      expect(await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst()).toBeUndefined();
    });

    // Several instances share PostgreSQL only: SQLite serves one instance (docs/architecture.md, "Multi-instance
    // coordination"), whose writes the tests above already race.
    it.skipIf(dialect === 'sqlite')(
      'keeps one body counted exactly when three instances write and delete the same bytes at once',
      async () => {
        const html = report('instances');
        const instances = [store, database.open(), database.open()];
        try {
          const keep = (await store.createDrop(newDrop(account.id, { html }), 1000))?.slug ?? '';
          const created = await Promise.all(
            instances.flatMap((s) =>
              Array.from({ length: 4 }, () => s.createDrop(newDrop(account.id, { html }), 1000)),
            ),
          );
          const slugs = created.map((d) => d?.slug ?? '');
          // Each instance deletes another's drops while republishing the same bytes to the one kept.
          await Promise.all([
            ...slugs.map((slug, i) => instances[(i + 1) % 3]?.deleteDrop(slug)),
            ...instances.map((s) => s.appendVersion(keep, version(html), {}, 100)),
          ]);
          expect(await bodyOf(html)).toMatchObject({ refs: 4 });
          expect((await store.getVersionContent(keep, 4))?.html).toBe(html);
          expect(await store.deleteDrop(keep)).toBe(true);
          expect(await bodyOf(html)).toBeUndefined();
        } finally {
          await Promise.all(instances.slice(1).map((s) => s.close()));
        }
      },
    );
  });
}
