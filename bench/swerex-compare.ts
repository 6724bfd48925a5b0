/**
 * Compares SWE-ReX servers the way the worker uses them: `run_in_session "true"` round trips with the real
 * SwerexClient (median, p90), then the project's conformance suite (44 checks, bench/swerex-compare/) against
 * the same server. Built in: the project's runtime as a sandbox image runs it (TCP on a port, `swerex-remote`
 * style) and the same runtime in a vefaas-local sandbox through the gateway (pinned by X-Faas-Instance-Name).
 * Any other server — the reference `swerex-remote`, a veFaaS sandbox through its route — with --url:
 *
 *   npm run bench:swerex-compare -- [--calls 200] [--no-conformance]
 *       [--url http://127.0.0.1:8000 --token T [--name reference] [--header 'X-Faas-Instance-Name: sbx-…']]
 *
 * Start the reference for a fair comparison with `TERM=dumb swerex-remote --port 8000 --auth-token T` (docs/vefaas.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { SwerexClient, buildStartCommand, closeSharedDispatchers, createVefaasClient } from '@rollout-fleet/sandbox';
import { freePort } from '@rollout-fleet/shared';
import { checkIsolation, startVefaasLocal } from '@rollout-fleet/vefaas-local';
import { machineLoad, ms, quantile } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    'no-conformance': { type: 'boolean', default: false },
    url: { type: 'string' },
    token: { type: 'string' },
    name: { type: 'string', default: 'given server' },
    header: { type: 'string', multiple: true, default: [] },
  },
});
const CALLS = Number(values.calls);
const CONFORMANCE = !values['no-conformance'];

interface Server {
  name: string;
  url: string;
  token: string;
  headers: Record<string, string>;
}

interface Verdict {
  passed: number;
  total: number;
  failed: string[];
}

async function latency(server: Server): Promise<number[]> {
  const instance = server.headers['x-faas-instance-name'];
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  const swerex = new SwerexClient({
    baseUrl: server.url,
    apiKey: server.token,
    dispatcher,
    ...(instance ? { instanceName: instance } : {}),
  });
  try {
    await swerex.waitUntilAlive({ timeoutMs: 30_000 });
    const session = `bench-${randomUUID().slice(0, 8)}`;
    await swerex.createSession({ session });
    const samples: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      // The body AgentEnv.run() sends for a step.
      await swerex.runInSession({ action_type: 'bash', session, command: 'true', timeout: 300, check: 'silent' });
      samples.push(performance.now() - t0);
    }
    await swerex.closeSession(session);
    return samples;
  } finally {
    await dispatcher.close();
  }
}

async function conformance(server: Server): Promise<Verdict> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-conformance-'));
  const report = join(dir, 'report.json');
  try {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        join(ROOT, 'bench/swerex-compare/vitest.config.ts'),
        '--reporter=json',
        `--outputFile=${report}`,
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'ignore'],
        env: {
          ...process.env,
          SWEREX_URL: server.url,
          SWEREX_TOKEN: server.token,
          SWEREX_HEADERS: JSON.stringify(server.headers),
        },
      },
    );
    await once(child, 'exit');
    const json = JSON.parse(await readFile(report, 'utf8')) as {
      testResults: Array<{ assertionResults: Array<{ status: string; fullName: string }> }>;
    };
    const results = json.testResults.flatMap((file) => file.assertionResults);
    return {
      passed: results.filter((r) => r.status === 'passed').length,
      total: results.length,
      failed: results.filter((r) => r.status !== 'passed').map((r) => r.fullName),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The runtime as a sandbox image starts it: `swerex_server.py --port P` (no isolation; its own cwd). */
async function startOursDirect(): Promise<{ server: Server; close(): Promise<void> }> {
  const token = randomUUID();
  const port = await freePort();
  const cwd = await mkdtemp(join(tmpdir(), 'rf-swerex-'));
  const child: ChildProcess = spawn(
    'python3',
    [
      '-E',
      '-s',
      '-B',
      join(ROOT, 'packages/vefaas-local/runtime/swerex_server.py'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--auth-token',
      token,
    ],
    { cwd, stdio: 'ignore' },
  );
  return {
    server: {
      name: 'ours, as an image runs it (TCP, no gateway)',
      url: `http://127.0.0.1:${port}`,
      token,
      headers: {},
    },
    close: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

/** The runtime in a vefaas-local sandbox, reached through the gateway route and pinned, as workers reach veFaaS. */
async function startOursGateway(): Promise<{ server: Server; close(): Promise<void> }> {
  const isolation = checkIsolation().bwrap ? 'bwrap' : 'none';
  const host = await startVefaasLocal({ isolation });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
  });
  const start = buildStartCommand();
  const { SandboxId } = await vefaas.createSandbox({
    FunctionId: host.functionId,
    InstanceImageInfo: { Command: start.command },
  });
  return {
    server: {
      name: `ours in a vefaas-local sandbox (${isolation}), through the gateway`,
      url: host.gatewayUrl,
      token: start.authToken,
      headers: { 'x-faas-instance-name': SandboxId },
    },
    close: async () => {
      await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId });
      await vefaas.close();
      await host.close();
    },
  };
}

function externalServer(): Server | undefined {
  if (!values.url) return undefined;
  if (!values.token) throw new Error('--url needs --token (the auth token the server was started with)');
  const headers = Object.fromEntries(
    (values.header ?? []).map((h) => {
      const colon = h.indexOf(':');
      if (colon < 1) throw new Error(`--header ${JSON.stringify(h)}: write "Name: value"`);
      return [h.slice(0, colon).trim().toLowerCase(), h.slice(colon + 1).trim()];
    }),
  );
  return { name: values.name ?? 'given server', url: values.url.replace(/\/+$/, ''), token: values.token, headers };
}

async function measure(server: Server): Promise<string> {
  const samples = await latency(server);
  const verdict = CONFORMANCE ? await conformance(server) : undefined;
  const checks =
    verdict === undefined
      ? 'not run'
      : `${verdict.passed}/${verdict.total}${verdict.failed.length > 0 ? ` (failed: ${verdict.failed.join('; ')})` : ''}`;
  return `| ${server.name} | ${ms(quantile(samples, 0.5))} | ${ms(quantile(samples, 0.9))} | ${checks} |`;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const external = externalServer();
  if (external) rows.push(await measure(external));
  for (const start of [startOursDirect, startOursGateway]) {
    const running = await start();
    try {
      rows.push(await measure(running.server));
    } finally {
      await running.close();
    }
  }
  await closeSharedDispatchers();
  console.log(
    `run_in_session "true" × ${CALLS} with SwerexClient (keep-alive), then the conformance suite; ${machineLoad()}`,
  );
  console.log('| server | median | p90 | conformance checks passed |\n|---|---|---|---|');
  for (const row of rows) console.log(row);
  const flags = [
    `--calls ${CALLS}`,
    ...(CONFORMANCE ? [] : ['--no-conformance']),
    ...(external
      ? [
          `--url ${external.url} --token … --name '${external.name}'`,
          ...Object.entries(external.headers).map(([k, v]) => `--header '${k}: ${v}'`),
        ]
      : []),
  ];
  console.log(`command: npm run bench:swerex-compare -- ${flags.join(' ')}`);
}

await main();
