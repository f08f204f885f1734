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
 * is the only public way to see an entry; it is removed before this returns.
 */
import { createHook } from 'node:async_hooks';

let pinned: object | undefined;

/** Idempotent. Returns true when an entry is held (false would mean Node no longer reports `TickObject`s). */
export function keepTickObjectShape(): boolean {
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
