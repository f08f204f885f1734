/**
 * Where the files `npm run build` writes are (the worker threads' compiled code, the tarballs the service hands out):
 * under the package's `dist/`, found from the package's root, so that the same code finds them whether it runs from
 * `src/` (the tests), from `dist/` or from the start-up bundle's chunks (docs/architecture.md, "Building").
 */
import fs from 'node:fs';

const PACKAGE_NAME = '@htmldrop/server';

/** The package's root folder: the nearest folder above this module whose package.json is the server's. */
function findPackageRoot(): URL {
  let dir = new URL('./', import.meta.url);
  for (;;) {
    const manifest = new URL('package.json', dir);
    if (fs.existsSync(manifest)) {
      const { name } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (name === PACKAGE_NAME) return dir;
    }
    const parent = new URL('../', dir);
    if (parent.href === dir.href) throw new Error(`${PACKAGE_NAME}: no package.json above ${import.meta.url}`);
    dir = parent;
  }
}

let root: URL | undefined;

/** A file (or, ending in `/`, a folder) under the package's `dist/`, e.g. `builtFile('storage/body-worker.js')`. */
export function builtFile(relative: string): URL {
  root ??= findPackageRoot();
  return new URL(`dist/${relative}`, root);
}

/** A file shipped with the package outside `dist/`, e.g. `packageFile('assets/fonts/DejaVuSans.ttf')`. */
export function packageFile(relative: string): URL {
  root ??= findPackageRoot();
  return new URL(relative, root);
}
