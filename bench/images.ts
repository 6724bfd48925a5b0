/**
 * Imported container images in vefaas-local: first import of a ~1 GB image, sandbox start of an imported image
 * against a directory image side by side, and what many sandboxes of one image cost beyond its one tree.
 *
 *   npm run bench:images -- [--pad-mb 900] [--starts 20] [--sandboxes 50]
 *
 * The image is built here (packages/test-kit/src/test-images.ts): busybox, bash and a Python of its own with
 * pytest and flake8, plus one layer of --pad-mb random (incompressible) bytes; built once and cached under the
 * OS temp dir. The import goes into a fresh images directory each run, so it is always a first import.
 * Start = CreateSandbox → Ready (the call returns when the sandbox is Ready), then the first /is_alive through
 * the gateway; the two kinds alternate, one at a time. Last line: one JSON object.
 */
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { createVefaasClient } from '@rollout-fleet/sandbox';
import { buildTestImage } from '@rollout-fleet/test-kit/test-images';
import { importImage, startVefaasLocal } from '@rollout-fleet/vefaas-local';
import { machineLoad, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    'pad-mb': { type: 'string', default: '900' },
    starts: { type: 'string', default: '20' },
    sandboxes: { type: 'string', default: '50' },
  },
});
const PAD_MB = Number(values['pad-mb']);
const STARTS = Number(values.starts);
const SANDBOXES = Number(values.sandboxes);
const MB = 1e6;
const IMAGE_NAME = 'sweb.eval.x86_64.bench__big-1';
const DIRECTORY_IMAGE = 'pyutils';
const EXAMPLES = fileURLToPath(new URL('../examples/images/', import.meta.url));

async function duBytes(path: string): Promise<number> {
  // Blocks actually used (du -sb counts apparent sizes; sparse or hard-linked files would mislead either way).
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { stdout } = await promisify(execFile)('du', ['-s', '--block-size=1', path]);
  return Number(stdout.split('\t')[0]);
}

async function meminfoKb(field: string): Promise<number> {
  const text = await readFile('/proc/meminfo', 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** PSS summed over every process of the given trees (shared pages split between their users). */
async function treePssBytes(roots: number[]): Promise<number> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    parents.set(Number(entry), Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]));
  }
  const tree = roots.filter((pid) => parents.has(pid));
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  let pss = 0;
  for (const pid of tree) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
    pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024;
  }
  return pss;
}

async function main(): Promise<void> {
  console.log(`load: ${machineLoad()}`);
  const buildStart = performance.now();
  const built = await buildTestImage({
    name: 'rf-bench-big',
    bash: true,
    python: true,
    config: { env: ['PATH=/opt/py/bin:/usr/bin:/bin'], workingDir: '/testbed' },
    layers: [{ padBytes: PAD_MB * 1024 * 1024, files: { '/testbed/test_ok.py': 'def test_ok():\n    pass\n' } }],
  });
  const archiveBytes = (await import('node:fs')).statSync(built.archive).size;
  console.log(
    `image: ${(archiveBytes / MB).toFixed(0)} MB docker-archive (built or found in ${((performance.now() - buildStart) / 1000).toFixed(1)} s)`,
  );

  const imagesDir = await mkdtemp(join(tmpdir(), 'rf-bench-images-'));
  const stateRoot = await mkdtemp(join(tmpdir(), 'rfbi-'));
  await cp(join(EXAMPLES, DIRECTORY_IMAGE), join(imagesDir, DIRECTORY_IMAGE), { recursive: true });
  const importStart = performance.now();
  let lastReport = 0;
  const imported = await importImage({
    source: built.archive,
    name: IMAGE_NAME,
    imagesDir,
    onProgress: (p) => {
      if (performance.now() - lastReport < 10_000) return;
      lastReport = performance.now();
      console.log(`  import: ${p.phase} ${(p.bytes / MB).toFixed(0)} MB (${(p.elapsedMs / 1000).toFixed(0)} s)`);
    },
  });
  const importS = (performance.now() - importStart) / 1000;
  const treeDisk = await duBytes(imported.image.dir);
  console.log(
    `first import: ${importS.toFixed(1)} s (skopeo copy ${(imported.copyMs / 1000).toFixed(1)} s, umoci unpack ${(imported.unpackMs / 1000).toFixed(1)} s); tree ${(treeDisk / MB).toFixed(0)} MB on disk; images dir ${((await duBytes(imagesDir)) / MB).toFixed(0)} MB`,
  );

  const host = await startVefaasLocal({ isolation: 'bwrap', imagesDir, stateRoot });
  const client = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
    timeoutMs: 180_000,
  });
  const start = async (image: string, token: string): Promise<{ id: string; readyMs: number; aliveMs: number }> => {
    const t0 = performance.now();
    const { SandboxId } = await client.createSandbox({
      FunctionId: host.functionId,
      InstanceImageInfo: { Image: image, Command: `python3 -m swerex.server --auth-token ${token}` },
    });
    const readyMs = performance.now() - t0;
    const alive = await request(`${host.gatewayUrl}/is_alive`, {
      headers: { 'x-faas-instance-name': SandboxId, 'x-api-key': token },
    });
    const body = (await alive.body.json()) as { is_alive?: boolean };
    if (body.is_alive !== true) throw new Error(`${image}: sandbox ${SandboxId} not alive`);
    return { id: SandboxId, readyMs, aliveMs: performance.now() - t0 };
  };
  const kinds = { imported: `swebench/${IMAGE_NAME}:latest`, directory: DIRECTORY_IMAGE } as const;
  const ready: Record<keyof typeof kinds, number[]> = { imported: [], directory: [] };
  const alive: Record<keyof typeof kinds, number[]> = { imported: [], directory: [] };
  try {
    // One of each first (the directory image's git build, the page cache), not counted.
    for (const image of Object.values(kinds)) {
      const warm = await start(image, 'warm');
      await client.killSandbox({ FunctionId: host.functionId, SandboxId: warm.id });
    }
    for (let i = 0; i < STARTS; i++) {
      for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) {
        const s = await start(kinds[kind], `t${i}`);
        ready[kind].push(s.readyMs);
        alive[kind].push(s.aliveMs);
        await client.killSandbox({ FunctionId: host.functionId, SandboxId: s.id });
      }
    }
    const p = (xs: number[], q: number) => Math.round(quantile(xs, q));
    for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>)
      console.log(
        `${kind} image (n=${STARTS}, alternating): CreateSandbox→Ready p50 ${p(ready[kind], 0.5)} ms, p90 ${p(ready[kind], 0.9)} ms; first /is_alive p50 ${p(alive[kind], 0.5)} ms, p90 ${p(alive[kind], 0.9)} ms`,
      );
    const ratio = quantile(ready.imported, 0.5) / quantile(ready.directory, 0.5);
    console.log(`imported ÷ directory p50: ${ratio.toFixed(2)} (goal ≤ 2)`);

    // Wait until the kills are done: the state root then holds nothing.
    while (host.sandboxCounts().total > 0) await new Promise((r) => setTimeout(r, 100));
    const diskBefore = (await duBytes(imagesDir)) + (await duBytes(stateRoot));
    const shmemBefore = await meminfoKb('Shmem');
    const availBefore = await meminfoKb('MemAvailable');
    const t0 = performance.now();
    const many = await Promise.all(
      Array.from({ length: SANDBOXES }, (_, i) =>
        client.createSandbox({
          FunctionId: host.functionId,
          InstanceImageInfo: { Image: kinds.imported, Command: `python3 -m swerex.server --auth-token m${i}` },
        }),
      ),
    );
    const allReadyS = (performance.now() - t0) / 1000;
    const counts = host.sandboxCounts();
    const diskAfter = (await duBytes(imagesDir)) + (await duBytes(stateRoot));
    const shmemAfter = await meminfoKb('Shmem');
    const availAfter = await meminfoKb('MemAvailable');
    const pss = await treePssBytes(host.sandboxPids());
    const diskBeyondKB = (diskAfter - diskBefore) / 1024;
    console.log(
      `${SANDBOXES} concurrent sandboxes of the imported image: ${counts.Ready} Ready in ${allReadyS.toFixed(1)} s; host disk beyond the one tree +${diskBeyondKB.toFixed(0)} KB (state dirs: sockets, logs); writable layers (Shmem) +${((shmemAfter - shmemBefore) / 1024).toFixed(1)} MB; sandbox processes PSS ${(pss / MB).toFixed(0)} MB (${(pss / MB / SANDBOXES).toFixed(1)} MB each); MemAvailable −${((availBefore - availAfter) / 1024).toFixed(0)} MB`,
    );
    await Promise.all(many.map((m) => client.killSandbox({ FunctionId: host.functionId, SandboxId: m.SandboxId })));
    console.log(
      JSON.stringify({
        image_mb: Math.round(archiveBytes / MB),
        import_s: Number(importS.toFixed(1)),
        tree_disk_mb: Math.round(treeDisk / MB),
        imported_ready_p50_ms: Math.round(quantile(ready.imported, 0.5)),
        imported_ready_p90_ms: Math.round(quantile(ready.imported, 0.9)),
        directory_ready_p50_ms: Math.round(quantile(ready.directory, 0.5)),
        directory_ready_p90_ms: Math.round(quantile(ready.directory, 0.9)),
        p50_ratio: Number(ratio.toFixed(2)),
        sandboxes: SANDBOXES,
        disk_beyond_tree_kb: Math.round(diskBeyondKB),
        shmem_mb: Number(((shmemAfter - shmemBefore) / 1024).toFixed(1)),
        pss_mb_per_sandbox: Number((pss / MB / SANDBOXES).toFixed(1)),
      }),
    );
  } finally {
    await client.close();
    await host.close();
    // A rootless unpack may leave directories without write permission: give them back before removing.
    const { execFileSync } = await import('node:child_process');
    execFileSync('chmod', ['-R', 'u+rwX', imagesDir]);
    await rm(imagesDir, { recursive: true, force: true });
    await rm(stateRoot, { recursive: true, force: true });
  }
}

await main();
