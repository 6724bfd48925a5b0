/** Host process-tree helpers (used when no cgroup tracks the sandbox, and by tests to check for leftovers). */
import { readdir, readFile } from 'node:fs/promises';

type ChildrenMap = Map<number, number[]>;

let runningScan: Promise<ChildrenMap> | null = null;
let queuedScan: Promise<ChildrenMap> | null = null;

/**
 * A parent → children map read from /proc that started after the call. Concurrent callers share one scan:
 * killing N sandboxes at once (host shutdown) otherwise reads /proc N times over, each read as long as the
 * N sandboxes' processes — quadratic (200 idle sandboxes took 42 s to close). A scan already running may
 * predate the caller's kill, so later callers join the next scan instead of the running one.
 */
function freshChildren(): Promise<ChildrenMap> {
  if (runningScan === null) return startScan();
  queuedScan ??= runningScan
    .catch(() => undefined)
    .then(() => {
      queuedScan = null;
      return startScan();
    });
  return queuedScan;
}

function startScan(): Promise<ChildrenMap> {
  const scan: Promise<ChildrenMap> = scanChildren().finally(() => {
    if (runningScan === scan) runningScan = null;
  });
  runningScan = scan;
  return scan;
}

async function scanChildren(): Promise<ChildrenMap> {
  const children: ChildrenMap = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue;
    // Field 4 (ppid) follows the parenthesised command name, which may itself contain spaces or ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  return children;
}

/** Pids of `rootPid` and all its live descendants (by parent links in /proc). */
export async function processTree(rootPid: number): Promise<number[]> {
  const children = await freshChildren();
  const out: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (!(await isAlive(pid))) continue;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** True while /proc/<pid> exists and the process is not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

export function killPids(pids: readonly number[], signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
