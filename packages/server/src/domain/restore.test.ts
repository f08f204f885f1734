import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../config.js';
import { createKyselyStore } from '../storage/kysely-store.js';
import { openSqlite } from '../storage/sqlite.js';
import { addVersion, createDrop, type DropDeps, restoreVersion } from './drops.js';
import type { Store } from './store.js';

let dir: string;
let store: Store;
let deps: DropDeps;
let changed: string[];
let ann: string;
let bo: string;

const T0 = Date.UTC(2026, 10, 21, 12);

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'htmldrop-restore-'));
  store = createKyselyStore(openSqlite(dir));
  await store.migrate();
  changed = [];
  deps = {
    store,
    clock: { now: () => T0 },
    limits: { ...DEFAULT_LIMITS, maxVersionsPerDrop: 3 },
    listener: { dropChanged: async (slug) => void changed.push(slug) },
  };
  ann = (await store.ensureAccount({ provider: 'local', subject: 'ann', login: 'ann' }, 'u_ann0000000000000', T0)).id;
  bo = (await store.ensureAccount({ provider: 'local', subject: 'bo', login: 'bo' }, 'u_bo00000000000000', T0)).id;
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A drop of ann's with v1 (html and context) and v2 (other html, no context, new title). */
async function twoVersions(): Promise<string> {
  const drop = await createDrop(deps, ann, {
    title: 'One',
    description: 'd',
    html: '<p>one</p>',
    context: 'why one',
    metadata: { kind: 'report' },
  });
  await addVersion(deps, ann, drop.slug, { html: '<p>two</p>', title: 'Two' });
  changed = [];
  return drop.slug;
}

describe('restoreVersion', () => {
  it("appends a copy of the version's stored html and context, leaving the details alone", async () => {
    const slug = await twoVersions();
    const restored = await restoreVersion(deps, ann, slug, 1);
    expect(restored).toMatchObject({
      latestVersion: 3,
      versionCount: 3,
      title: 'Two',
      description: 'd',
      metadata: { kind: 'report' },
    });
    expect(changed).toEqual([slug]);
    expect((await store.getVersionContent(slug, undefined))?.html).toBe('<p>one</p>');
    expect(await store.getVersion(slug, 3)).toMatchObject({ context: 'why one', hasContext: true });
    expect((await store.getVersionContent(slug, 1))?.html).toBe('<p>one</p>');

    await store.deleteVersion(slug, 3, T0);
    const again = await restoreVersion(deps, ann, slug, 2);
    expect(again.latestVersion).toBe(4);
    expect((await store.getVersionContent(slug, 4))?.html).toBe('<p>two</p>');
    expect(await store.getVersion(slug, 4)).toMatchObject({ context: null, hasContext: false });
  });

  it('answers version_not_found for a version that does not exist (any more), not_found for an unknown drop', async () => {
    const slug = await twoVersions();
    await expect(restoreVersion(deps, ann, slug, 9)).rejects.toMatchObject({
      code: 'version_not_found',
      details: { version: 9 },
    });
    await store.deleteVersion(slug, 1, T0);
    await expect(restoreVersion(deps, ann, slug, 1)).rejects.toMatchObject({ code: 'version_not_found' });
    await expect(restoreVersion(deps, ann, 'nosuchslug', 1)).rejects.toMatchObject({ code: 'not_found' });
    expect((await store.findDrop(slug))?.latestVersion).toBe(2);
    expect(changed).toEqual([]);
  });

  it("refuses another account's drop", async () => {
    const slug = await twoVersions();
    await expect(restoreVersion(deps, bo, slug, 1)).rejects.toMatchObject({ code: 'forbidden' });
    expect(await store.listVersions(slug)).toHaveLength(2);
    expect(changed).toEqual([]);
  });

  it('respects the version cap', async () => {
    const slug = await twoVersions();
    await restoreVersion(deps, ann, slug, 1);
    await expect(restoreVersion(deps, ann, slug, 1)).rejects.toMatchObject({
      code: 'version_limit_reached',
      details: { max_versions: 3 },
    });
    expect(await store.listVersions(slug)).toHaveLength(3);
    expect(changed).toEqual([slug]);
  });
});
