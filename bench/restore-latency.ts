/**
 * Added eval latency of putting the test side back (grading/restore-test-side.ts), per graded episode: in one
 * real vefaas-local sandbox of the examples' pyutils image, R rounds of — reset the tree, apply a patch with the
 * apply step (its untracked-file snapshot included), then time `restoreTestSide` (the listing `/execute`, the
 * rule, the restore `/execute` when anything is test-side) — for a plain fix and for a fix plus a conftest.py,
 * a tests/__init__.py and a package shadowing the test file. Prints median and p90 per kind; the eval's other
 * work (apply, tests) is the same with or without it.
 *
 *   npm run bench:restore-latency -- [--rounds 30]
 */
import { parseArgs } from 'node:util';
import { SwerexClient, buildStartCommand, closeSharedDispatchers, createVefaasClient } from '@rollout-fleet/sandbox';
import { startVefaasLocal } from '@rollout-fleet/vefaas-local';
import { corpusImages } from '@rollout-fleet/test-kit/adversarial-cases';
import { buildApplyPatchScript, restoreTestSide } from '@rollout-fleet/worker';
import { fileURLToPath } from 'node:url';
import { machineLoad, ms, quantile } from './lib/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const ROUNDS = Number(values.rounds);
const root = fileURLToPath(new URL('..', import.meta.url));

const FIX =
  'diff --git a/pyutils/calc.py b/pyutils/calc.py\n--- a/pyutils/calc.py\n+++ b/pyutils/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n     """Return the sum of a and b."""\n-    return a - b\n+    return a + b\n';
const newFile = (path: string, line: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${line}\n`;
const KINDS: Record<string, string> = {
  'plain fix': FIX,
  'fix + conftest/shadow': [
    FIX,
    newFile('conftest.py', 'import os'),
    newFile('tests/test_basic/__init__.py', 'import os'),
    newFile('unittest/__init__.py', 'import os'),
  ].join(''),
};
const TEST_PATCH = 'diff --git a/tests/test_basic.py b/tests/test_basic.py\n';

async function main(): Promise<void> {
  const images = corpusImages(`${root}examples/images`);
  const host = await startVefaasLocal({ imagesDir: images.imagesDir });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
  });
  const start = buildStartCommand();
  const { SandboxId } = await vefaas.createSandbox({
    FunctionId: host.functionId,
    InstanceImageInfo: { Image: 'pyutils', Command: start.command },
  });
  const swerex = new SwerexClient({ baseUrl: host.gatewayUrl, instanceName: SandboxId, apiKey: start.authToken });
  const shell = { execute: (command: Parameters<SwerexClient['execute']>[0]) => swerex.execute(command) };
  const sh = (script: string) => swerex.execute({ command: ['/bin/bash', '-c', script], shell: false, timeout: 60 });
  try {
    await swerex.waitUntilAlive({ timeoutMs: 30_000, intervalMs: 20 });
    const figures: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [kind, patch] of Object.entries(KINDS)) {
        await sh('cd /testbed && git checkout -q -- . && git clean -fdq');
        await swerex.writeFile({ path: '/tmp/bench/patch.diff', content: patch });
        const apply = buildApplyPatchScript('/tmp/bench/patch.diff', { untrackedSnapshot: '/tmp/bench/untracked' });
        await swerex.writeFile({ path: '/tmp/bench/apply.sh', content: apply });
        const applied = await sh('bash /tmp/bench/apply.sh');
        if (applied.exit_code !== 0) throw new Error(`${kind}: the patch did not apply: ${applied.stdout}`);
        const t0 = performance.now();
        const outcome = await restoreTestSide(shell, {
          repoDir: '/testbed',
          eval: { test_patch: TEST_PATCH },
          untrackedSnapshot: '/tmp/bench/untracked',
        });
        (figures[kind] ??= []).push(performance.now() - t0);
        if (!outcome.ok) throw new Error(`${kind}: ${outcome.message}`);
      }
    }
    console.log(`restore step on a vefaas-local bwrap sandbox (pyutils), ${ROUNDS} rounds, ${machineLoad()}`);
    const out: Record<string, { median_ms: number; p90_ms: number }> = {};
    for (const [kind, samples] of Object.entries(figures)) {
      const median = quantile(samples, 0.5);
      const p90 = quantile(samples, 0.9);
      console.log(`${kind.padEnd(24)} median ${ms(median)}  p90 ${ms(p90)}`);
      out[kind] = { median_ms: Number(median.toFixed(1)), p90_ms: Number(p90.toFixed(1)) };
    }
    console.log(JSON.stringify(out));
  } finally {
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId }).catch(() => undefined);
    await vefaas.close();
    await host.close();
    await closeSharedDispatchers();
    images.close();
  }
}

await main();
