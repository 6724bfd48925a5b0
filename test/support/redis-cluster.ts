/**
 * A throwaway three-master Redis Cluster on loopback (the recipe of the Redis docs: `redis-server
 * --cluster-enabled yes` per node, then `redis-cli --cluster create`). Nothing is written outside a
 * temporary directory; `close()` stops the nodes and removes it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { createRedis, freePort, isPortFree } from '@rollout-fleet/shared';

export interface LocalCluster {
  /** `redis+cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>` */
  url: string;
  ports: number[];
  close(): Promise<void>;
}

/** A node needs its port and port + 10000 (the cluster bus) free. */
async function nodePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || taken.has(port) || taken.has(port + 10_000)) continue;
    if (await isPortFree(port + 10_000)) return port;
  }
}

async function startNode(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      '5000',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8');
  // redis-server says when it listens; waiting for that line is the readiness event.
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`redis-server on ${port} exited (${String(code)}): ${output.slice(-500)}`)),
    );
    child.once('error', reject);
  });
  await ready;
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export async function startRedisCluster(masters = 3): Promise<LocalCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-cluster-'));
  const nodes: ChildProcess[] = [];
  const ports: number[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(nodes.map(stop));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < masters; i += 1) {
      const port = await nodePort(taken);
      taken.add(port).add(port + 10_000);
      ports.push(port);
      nodes.push(await startNode(dir, port));
    }
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0)
      throw new Error(
        `redis-cli --cluster create failed: ${create.error?.message ?? ''}${create.stdout.slice(-800)}${create.stderr}`,
      );
    // Every node must agree that all 16384 slots are served before clients see a stable cluster.
    for (const port of ports) {
      const probe = createRedis(`redis://127.0.0.1:${port}`);
      try {
        await vi.waitFor(async () => expect(await probe.call('CLUSTER', 'INFO')).toMatch(/cluster_state:ok/), {
          timeout: 20_000,
          interval: 100,
        });
      } finally {
        probe.disconnect();
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, close };
}
