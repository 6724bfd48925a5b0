/**
 * `rollout-fleet render-images` on the SWE-bench fixture dataset: one self-contained build context per
 * instance (Dockerfile FROM the instance image, the server block, the runtime files as shipped), build.sh and
 * images.json; a bad dataset is refused with its location. No Docker engine here, so the image's start path is
 * exercised directly: the rendered install.sh makes both `swerex-remote …` and `python3 -m swerex.server …`
 * start the runtime, which then answers SWE-ReX calls with the token.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { freePort } from '@rollout-fleet/shared';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { sharedDataNeed, sharedDataPath } from '@rollout-fleet/test-kit/shared-data';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATASET_FILE = 'swe-agent/swe-bench-lite-test.json';
const DATASET = sharedDataPath(DATASET_FILE);
const RUNTIME = join(ROOT, 'packages/vefaas-local/runtime');
const IDS = [
  'django__django-15781',
  'django__django-16255',
  'pytest-dev__pytest-11143',
  'scikit-learn__scikit-learn-13584',
  'sympy__sympy-13031',
];

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(ROOT, 'bin/rollout-fleet.js'), 'render-images', ...args], {
    encoding: 'utf8',
    cwd: ROOT,
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** Polls until the server answers /is_alive with the key (it has just been started; no readiness event exists). */
async function answers(port: number, token: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/is_alive`, { headers: { 'x-api-key': token } });
      expect(await res.json()).toEqual({ is_alive: true, message: '' });
    },
    { timeout: 15_000, interval: 50 },
  );
  const denied = await fetch(`http://127.0.0.1:${port}/is_alive`, { headers: { 'x-api-key': 'wrong' } });
  expect(denied.status).toBe(401);
  const post = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect((await post('/create_session', { session: 'rf', session_type: 'bash', startup_timeout: 10 })).status).toBe(
    200,
  );
  expect(
    await (
      await post('/run_in_session', { session: 'rf', command: 'echo from-the-image', action_type: 'bash' })
    ).json(),
  ).toMatchObject({ output: 'from-the-image\n', exit_code: 0 });
}

describeWith([sharedDataNeed(DATASET_FILE)], 'rollout-fleet render-images', () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'rf-images-'));
  });
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('writes one build context per instance with the project runtime, build.sh and images.json', async () => {
    const run = cli([
      '--dataset',
      DATASET,
      '--out',
      join(out, 'ours'),
      '--tag',
      'registry.example.com/rf/{instance_id_1776}:v1',
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect((await readdir(join(out, 'ours'))).sort()).toEqual([...IDS, 'build.sh', 'images.json'].sort());
    const dockerfile = await readFile(join(out, 'ours', 'django__django-15781', 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM swebench\/sweb\.eval\.x86_64\.django_1776_django-15781:latest$/m);
    expect(dockerfile).toContain(
      'COPY swerex-local/ /opt/swerex-local/\nRUN sh /opt/swerex-local/install.sh\nEXPOSE 8000',
    );
    expect(dockerfile).toContain('docker build -t registry.example.com/rf/django_1776_django-15781:v1 .');
    expect(dockerfile).not.toContain('{{');
    // The runtime files are the ones vefaas-local runs, byte for byte.
    const shipped = (await readdir(RUNTIME)).filter((f) => f.endsWith('.py')).sort();
    const context = join(out, 'ours', 'sympy__sympy-13031', 'swerex-local');
    expect((await readdir(join(context, 'runtime'))).filter((f) => f.endsWith('.py')).sort()).toEqual(shipped);
    for (const file of shipped)
      expect(await readFile(join(context, 'runtime', file), 'utf8'), file).toBe(
        await readFile(join(RUNTIME, file), 'utf8'),
      );
    expect(JSON.parse(await readFile(join(out, 'ours', 'images.json'), 'utf8'))).toMatchObject({
      'pytest-dev__pytest-11143': 'registry.example.com/rf/pytest-dev_1776_pytest-11143:v1',
    });
    const build = await readFile(join(out, 'ours', 'build.sh'), 'utf8');
    expect(build.split('\n').filter((l) => l.startsWith('docker build'))).toHaveLength(IDS.length);
    expect(build).toContain(
      "docker build -t 'registry.example.com/rf/sympy_1776_sympy-13031:v1' 'sympy__sympy-13031' && docker push 'registry.example.com/rf/sympy_1776_sympy-13031:v1'",
    );
  });

  it('with --server reference: pip-installs swe-rex 1.4.0 with TERM=dumb, ships no runtime, keeps the shim', async () => {
    const run = cli([
      '--dataset',
      DATASET,
      '--out',
      join(out, 'reference'),
      '--server',
      'reference',
      '--instances',
      'sympy__sympy-13031',
    ]);
    expect(run.status, run.stderr).toBe(0);
    expect(await readdir(join(out, 'reference'))).toEqual(
      expect.arrayContaining(['sympy__sympy-13031', 'build.sh', 'images.json']),
    );
    const dockerfile = await readFile(join(out, 'reference', 'sympy__sympy-13031', 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('-m pip install --no-cache-dir "swe-rex==1.4.0"');
    expect(dockerfile).toContain('ENV TERM=dumb');
    expect(dockerfile).toContain('RUN sh /opt/swerex-local/install.sh --shim-only');
    expect((await readdir(join(out, 'reference', 'sympy__sympy-13031', 'swerex-local'))).sort()).toEqual([
      'install.sh',
      'shim',
    ]);
  });

  it('refuses a dataset with problems (file and record named) or unknown instances, writing nothing', async () => {
    const bad = join(out, 'bad.json');
    await writeFile(bad, JSON.stringify([{ repo: 'a/b', base_commit: 'x' }]));
    const run = cli(['--dataset', bad, '--out', join(out, 'none')]);
    expect(run.status).toBe(3);
    expect(run.stderr).toContain(bad);
    expect(run.stderr).toContain('instance_id');
    const unknown = cli(['--dataset', DATASET, '--out', join(out, 'none'), '--instances', 'nope__nope-1']);
    expect(unknown.status).toBe(3);
    expect(unknown.stderr).toContain('not in');
    await expect(readdir(join(out, 'none'))).rejects.toThrow();
  });

  it('the rendered install.sh makes `swerex-remote` and `python3 -m swerex.server` start the runtime', async () => {
    const context = join(out, 'ours', 'django__django-16255', 'swerex-local');
    const prefix = join(out, 'usr');
    const site = join(out, 'site');
    const install = spawnSync('sh', [join(context, 'install.sh')], {
      encoding: 'utf8',
      env: { ...process.env, PREFIX: prefix, SWEREX_SITE: site },
    });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stdout).toMatch(/swerex-remote runs .*runtime\/swerex_server\.py with \S*python3/);
    expect(await readFile(join(site, 'swerex-local.pth'), 'utf8')).toBe(`${join(context, 'shim')}\n`);
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` };

    const token = 'tok-image';
    const port = await freePort();
    const remote = spawn(
      join(prefix, 'bin', 'swerex-remote'),
      ['--host', '127.0.0.1', '--port', String(port), '--auth-token', token],
      { env, stdio: 'ignore' },
    );
    try {
      await answers(port, token);
    } finally {
      await stop(remote);
    }

    // What the worker's default start command runs: python3 -m swerex.server, found through the .pth file.
    const port2 = await freePort();
    const shimmed = spawn(
      'python3',
      [
        '-c',
        `import site, runpy, sys; site.addsitedir(${JSON.stringify(site)}); sys.argv[1:] = ${JSON.stringify(['--host', '127.0.0.1', '--port', String(port2), '--auth-token', token])}; runpy.run_module('swerex.server', run_name='__main__')`,
      ],
      { env, stdio: 'ignore' },
    );
    try {
      await answers(port2, token);
    } finally {
      await stop(shimmed);
    }
  });
});
