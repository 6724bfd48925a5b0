/**
 * vefaas-local figures: cold start of real sandboxes, memory of many idle ones, emulated create throughput.
 *
 *   npm run bench:host -- [--real 10] [--idle 200] [--emulated 2000] [--concurrency 64]
 *
 * The host runs in this process (as embedded in tests and the demo), so "host RSS" includes the bench client.
 * Sandbox RSS = VmRSS summed over every process of every sandbox tree (bwrap, its reaper, python server); it counts
 * shared pages once per process, so PSS (smaps_rollup, shared pages split between their users) is printed too.
 */
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { createVefaasClient } from '@rollout-fleet/sandbox';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';

const { values } = parseArgs({
  options: {
    real: { type: 'string', default: '10' },
    idle: { type: 'string', default: '200' },
    emulated: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '64' },
  },
});
const REAL = Number(values.real);
const IDLE = Number(values.idle);
const EMULATED = Number(values.emulated);
const CONCURRENCY = Number(values.concurrency);
const MB = 1024 * 1024;

function clientFor(host: VefaasLocalHandle) {
  return createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
    timeoutMs: 120_000,
  });
}

const command = (token: string) => `python3 -m swerex.server --auth-token ${token}`;

async function pool<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await work(i);
      }
    }),
  );
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function treeRssBytes(roots: number[]): Promise<{ processes: number; bytes: number; pssBytes: number }> {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      parents.set(Number(entry), ppid);
      rss.set(Number(entry), kb * 1024);
    } catch {
      // gone
    }
  }
  const tree = roots.filter((pid) => parents.has(pid));
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  // RSS counts the shared Python/bash pages once per process; PSS splits them, so its sum is what the trees cost.
  let pss = 0;
  for (const pid of tree) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
    pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024;
  }
  return { processes: tree.length, bytes: tree.reduce((sum, pid) => sum + (rss.get(pid) ?? 0), 0), pssBytes: pss };
}

async function benchReal(): Promise<void> {
  const host = await startVefaasLocal({ isolation: 'bwrap' });
  const client = clientFor(host);
  try {
    const createMs: number[] = [];
    const aliveMs: number[] = [];
    for (let i = 0; i < REAL; i++) {
      const started = performance.now();
      const { SandboxId } = await client.createSandbox({
        FunctionId: host.functionId,
        InstanceImageInfo: { Command: command(`t${i}`) },
      });
      createMs.push(performance.now() - started);
      const response = await request(`${host.gatewayUrl}/is_alive`, {
        headers: { 'x-faas-instance-name': SandboxId, 'x-api-key': `t${i}` },
      });
      await response.body.dump();
      aliveMs.push(performance.now() - started);
      await client.killSandbox({ FunctionId: host.functionId, SandboxId });
    }
    createMs.sort((a, b) => a - b);
    aliveMs.sort((a, b) => a - b);
    console.log(
      `real bwrap cold start (n=${REAL}, sequential): CreateSandbox→Ready p50 ${percentile(createMs, 50).toFixed(0)} ms, p90 ${percentile(createMs, 90).toFixed(0)} ms; to first /is_alive via gateway p50 ${percentile(aliveMs, 50).toFixed(0)} ms, p90 ${percentile(aliveMs, 90).toFixed(0)} ms`,
    );

    const rssBefore = process.memoryUsage().rss;
    const idleStart = performance.now();
    const ids = await pool(
      IDLE,
      16,
      async (i) =>
        (await client.createSandbox({ FunctionId: host.functionId, InstanceImageInfo: { Command: command(`i${i}`) } }))
          .SandboxId,
    );
    const idleSeconds = (performance.now() - idleStart) / 1000;
    const counts = host.sandboxCounts();
    const sandboxes = await treeRssBytes(host.sandboxPids());
    const hostRss = process.memoryUsage().rss;
    console.log(
      `${IDLE} idle real sandboxes (Ready: ${counts.Ready}, created in ${idleSeconds.toFixed(1)} s at concurrency 16):`,
    );
    console.log(`  host process RSS ${(hostRss / MB).toFixed(0)} MB (before: ${(rssBefore / MB).toFixed(0)} MB)`);
    console.log(
      `  sandbox processes ${sandboxes.processes}, RSS sum ${(sandboxes.bytes / MB).toFixed(0)} MB (${(sandboxes.bytes / MB / Math.max(1, ids.length)).toFixed(1)} MB per sandbox)`,
    );
    console.log(
      `  sandbox processes PSS sum ${(sandboxes.pssBytes / MB).toFixed(0)} MB (${(sandboxes.pssBytes / MB / Math.max(1, ids.length)).toFixed(1)} MB per sandbox; shared pages split)`,
    );
    console.log(
      `  total host RSS + sandbox RSS ${((hostRss + sandboxes.bytes) / MB).toFixed(0)} MB; host RSS + sandbox PSS ${((hostRss + sandboxes.pssBytes) / MB).toFixed(0)} MB`,
    );
    const closeStart = performance.now();
    await host.close();
    console.log(
      `  close() killed all in ${((performance.now() - closeStart) / 1000).toFixed(1)} s; live afterwards: ${host.liveSandboxes()}`,
    );
  } finally {
    await client.close();
    await host.close();
  }
}

async function benchEmulated(): Promise<void> {
  const host = await startVefaasLocal({ isolation: 'emulated' });
  const client = clientFor(host);
  try {
    const started = performance.now();
    await pool(EMULATED, CONCURRENCY, (i) =>
      client.createSandbox({
        FunctionId: host.functionId,
        InstanceImageInfo: { Image: 'img:1', Command: command(`e${i}`) },
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `emulated: ${EMULATED} CreateSandbox (signed, concurrency ${CONCURRENCY}) in ${seconds.toFixed(2)} s = ${(EMULATED / seconds).toFixed(0)}/s; host RSS ${(process.memoryUsage().rss / MB).toFixed(0)} MB`,
    );
  } finally {
    await client.close();
    await host.close();
  }
}

if (REAL > 0 || IDLE > 0) await benchReal();
if (EMULATED > 0) await benchEmulated();
console.log(
  `command: npm run bench:host -- --real ${REAL} --idle ${IDLE} --emulated ${EMULATED} --concurrency ${CONCURRENCY}`,
);
