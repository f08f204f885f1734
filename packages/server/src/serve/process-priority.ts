/**
 * The screenshot browser runs at a lower CPU priority than the service (docs/decisions/0038-previews-and-embeds.md,
 * "Resources"): on a machine with few cores, a page being photographed takes only what writes and reads leave. Linux
 * keeps a priority per thread, and a process or thread starts with the priority of the thread that made it, so every
 * thread of every process of the browser's tree is lowered, again after each job (a renderer made since). Elsewhere
 * (no /proc) nothing happens.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness the browser's threads get (0 is the service's; 19 the lowest priority). */
export const BROWSER_NICENESS = 10;

function numbers(path: string): number[] {
  try {
    return readdirSync(path)
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}

/** The threads of a process. */
const threadsOf = (pid: number): number[] => numbers(`/proc/${pid}/task`);

/** The processes a process started (through any of its threads). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const tid of threadsOf(pid)) {
    try {
      const listed = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (listed !== '') children.push(...listed.split(/\s+/).map(Number));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return children;
}

/** `pid` and every process under it. */
export function processTree(pid: number): number[] {
  const tree: number[] = [];
  const next = [pid];
  for (let at = next.pop(); at !== undefined; at = next.pop()) {
    tree.push(at);
    next.push(...childrenOf(at));
  }
  return tree;
}

/** The processes our process started that run with `--remote-debugging-pipe` (Playwright's browsers). */
export function pipeBrowsers(): number[] {
  return childrenOf(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--remote-debugging-pipe');
    } catch {
      return false;
    }
  });
}

/** Lowers every thread of the tree under `pid` to {@link BROWSER_NICENESS}; returns how many it lowered. */
export function lowerPriority(pid: number): number {
  let lowered = 0;
  for (const process of processTree(pid)) {
    for (const tid of threadsOf(process)) {
      try {
        setPriority(tid, BROWSER_NICENESS);
        lowered += 1;
      } catch {
        // Gone meanwhile, or not ours to change.
      }
    }
  }
  return lowered;
}

/** The niceness of each thread of the tree under `pid` (for tests). */
export function nicenessOfTree(pid: number): number[] {
  const found: number[] = [];
  for (const process of processTree(pid)) {
    for (const tid of threadsOf(process)) {
      try {
        const stat = readFileSync(`/proc/${process}/task/${tid}/stat`, 'utf8');
        // Fields after the command (which may hold spaces) in parentheses: niceness is the 19th field overall.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        found.push(Number(fields[16]));
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return found;
}
