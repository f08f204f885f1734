/**
 * Keeps the hidden class (V8 map) of Node's `process.nextTick` queue entries alive for the life of the process.
 *
 * Why: every HTTP request makes node:http and its streams call `process.nextTick` several times. Node 20 builds
 * each queue entry with an object literal whose first keys are computed symbols, so V8 creates that object's map
 * chain at run time and nothing but live entries keeps it alive. When a full GC happens at an instant with no entry
 * alive, the chain is collected. The next entry then gets a fresh chain, and the property-definition feedback in
 * `nextTick` turns megamorphic for good. From then on, every entry is built in V8's runtime
 * (`Runtime_DefineKeyedOwnPropertyInLiteral`), which cost the raw path 20-25% of its requests/s on this machine in
 * a random share of processes, a bare node:http server included (see bench/README.md, "Where the gap comes from").
 *
 * Holding one entry pins its map, and through the map's back pointers the whole chain, so the feedback stays
 * monomorphic and optimized code builds the entries inline. The cost is one small object. A brief `init` async hook
 * (a discouraged API, used for nothing else) is the only public way to see an entry; it is removed before this
 * returns.
 *
 * Only on Node 20, the one major version where the failure mode was seen. Remove this module when the project no
 * longer supports Node 20 and `node bench/tick-shape-repro.mjs` reports no megamorphic site for the unpinned case on
 * every supported version (docs/decisions/0013-tick-shape-v8-workaround.md).
 */
import { createHook } from 'node:async_hooks';

let pinned: object | undefined;

/** Whether this Node version needs the workaround: the failure mode was reproduced on Node 20 only. */
export function tickShapeWorkaroundApplies(nodeVersion: string = process.versions.node): boolean {
  return nodeVersion.split('.')[0] === '20';
}

/**
 * Holds one tick entry, on any version (the reproduction script uses it to compare). Idempotent. Returns true when
 * an entry is held (false would mean Node no longer reports `TickObject`s).
 */
export function holdTickObject(): boolean {
  if (pinned !== undefined) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && pinned === undefined) pinned = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return pinned !== undefined;
}

/**
 * The service's start-up call: holds a tick entry where the workaround applies (Node 20). Returns false only when
 * it applies and could not hold one.
 */
export function keepTickObjectShape(): boolean {
  return tickShapeWorkaroundApplies() ? holdTickObject() : true;
}
