/**
 * Per-sandbox runtime figures, measured directly over the sandbox's UNIX socket (no gateway):
 * - launch → first `/is_alive` 200 (bubblewrap jail + Python server start-up),
 * - RSS of one idle sandbox process tree (VmRSS summed over bwrap, its init and the server; then with one
 *   bash session open),
 * - round trip of `run_in_session` with `true` and of `/execute` with `true` (keep-alive client).
 * Then the same `run_in_session` round trip the way the worker makes it: the real SwerexClient over HTTP
 * through vefaas-local's gateway route, pinned by X-Faas-Instance-Name (request id, zod validation included).
 *
 *   npm run bench:swerex -- [--launches 5] [--calls 200] [--isolation bwrap|none]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'undici';
import { SwerexClient, buildStartCommand, closeSharedDispatchers, createVefaasClient } from '@rollout-fleet/sandbox';
import { isSwerexAlive, launchSandbox, startVefaasLocal, type SandboxProcess } from '@rollout-fleet/vefaas-local';

const { values } = parseArgs({
  options: {
    launches: { type: 'string', default: '5' },
    calls: { type: 'string', default: '200' },
    isolation: { type: 'string', default: 'bwrap' },
  },
});
const LAUNCHES = Number(values.launches);
const CALLS = Number(values.calls);
const ISOLATION = values.isolation === 'none' ? 'none' : 'bwrap';
const TOKEN = randomUUID();

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function treeRssKiB(sandbox: SandboxProcess): Promise<number> {
  let total = 0;
  for (const pid of await sandbox.listPids()) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return total;
}

async function launch(stateRoot: string): Promise<{ sandbox: SandboxProcess; startMs: number }> {
  const t0 = performance.now();
  const sandbox = await launchSandbox({
    sandboxId: `bench-${randomUUID().slice(0, 8)}`,
    command: `python3 -m swerex.server --auth-token ${TOKEN}`,
    imageDir: null,
    envs: {},
    memoryMB: 2048,
    cpuMilli: 1000,
    network: false,
    isolation: ISOLATION,
    stateRoot,
  });
  while (!(await isSwerexAlive({ socketPath: sandbox.socketPath, authToken: TOKEN, timeoutMs: 1000 }))) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { sandbox, startMs: performance.now() - t0 };
}

async function timeCalls(client: Client, path: string, body: unknown): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const response = await client.request({
      method: 'POST',
      path,
      headers: { 'x-api-key': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${text}`);
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** `run_in_session "true"` × CALLS with the worker's client, through the gateway of an embedded vefaas-local. */
async function timeGatewayCalls(): Promise<number[]> {
  const host = await startVefaasLocal({ isolation: ISOLATION });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
  });
  try {
    const start = buildStartCommand();
    const { SandboxId } = await vefaas.createSandbox({
      FunctionId: host.functionId,
      InstanceImageInfo: { Command: start.command },
    });
    const swerex = new SwerexClient({ baseUrl: host.gatewayUrl, instanceName: SandboxId, apiKey: start.authToken });
    await swerex.waitUntilAlive({ timeoutMs: 30_000, intervalMs: 20 });
    await swerex.createSession({ session: 'default' });
    const samples: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      // The body AgentEnv.run() sends for a step.
      await swerex.runInSession({
        action_type: 'bash',
        session: 'default',
        command: 'true',
        timeout: 300,
        check: 'silent',
      });
      samples.push(performance.now() - t0);
    }
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId });
    return samples;
  } finally {
    await vefaas.close();
    await host.close();
    await closeSharedDispatchers();
  }
}

async function main(): Promise<void> {
  const stateRoot = await mkdtemp(join(tmpdir(), 'rf-bench-'));
  const starts: number[] = [];
  let kept: SandboxProcess | undefined;
  for (let i = 0; i < LAUNCHES; i++) {
    const { sandbox, startMs } = await launch(stateRoot);
    starts.push(startMs);
    if (kept === undefined) kept = sandbox;
    else await sandbox.kill();
  }
  const sandbox = kept as SandboxProcess;
  const idleRss = await treeRssKiB(sandbox);
  const client = new Client('http://localhost', { socketPath: sandbox.socketPath });
  await timeCalls(client, '/create_session', { session: 'default', session_type: 'bash' }).catch(() => undefined);
  const withSessionRss = await treeRssKiB(sandbox);
  const session = await timeCalls(client, '/run_in_session', {
    command: 'true',
    session: 'default',
    action_type: 'bash',
  });
  const execute = await timeCalls(client, '/execute', { command: 'true', shell: true });
  await client.close();
  await sandbox.kill();
  await rm(stateRoot, { recursive: true, force: true });
  const gateway = await timeGatewayCalls();

  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(`isolation: ${ISOLATION}, launches: ${LAUNCHES}, calls per endpoint: ${CALLS}`);
  console.log(`launch → first /is_alive 200: median ${ms(quantile(starts, 0.5))}, max ${ms(Math.max(...starts))}`);
  console.log(
    `idle sandbox tree RSS: ${(idleRss / 1024).toFixed(1)} MiB (with one bash session: ${(withSessionRss / 1024).toFixed(1)} MiB)`,
  );
  console.log(
    `run_in_session "true" (unix socket): median ${ms(quantile(session, 0.5))}, p90 ${ms(quantile(session, 0.9))}`,
  );
  console.log(`/execute "true":       median ${ms(quantile(execute, 0.5))}, p90 ${ms(quantile(execute, 0.9))}`);
  console.log(
    `run_in_session "true" via gateway (SwerexClient, HTTP, pinned): median ${ms(quantile(gateway, 0.5))}, p90 ${ms(quantile(gateway, 0.9))}`,
  );
  console.log(`command: npm run bench:swerex -- --launches ${LAUNCHES} --calls ${CALLS} --isolation ${ISOLATION}`);
}

await main();
