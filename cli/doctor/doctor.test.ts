/**
 * `rollout-fleet doctor` against vefaas-local: a healthy setup passes every check; each failure it diagnoses
 * is produced for real and named with its fix — bad keys, a skewed clock (injected), a route that is
 * unreachable, wrong, wants a key or fails upstream, a function id the account does not have, a key pair without
 * a veFaaS policy (AccessDenied), CreateSandbox throttled, a sandbox that fails to start, fails its health check
 * or starts too slowly, a SWE-ReX server that refuses the token, an image without python3, a .bashrc that prints
 * on every prompt, a kill that fails, an unreachable control plane — and the sandbox it started is killed (or, when the kill fails, named in the fix).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedDispatchers, createVefaasClient, type VefaasTarget } from '@rollout-fleet/sandbox';
import { createLogger, freePort } from '@rollout-fleet/shared';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { startVefaasLocal, type VefaasLocalHandle, type VefaasLocalOptions } from '@rollout-fleet/vefaas-local';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { formatCheckLine } from '../commands/doctor.js';
import type { CheckLine } from './doctor-types.js';
import { runDoctor, type DoctorOptions } from './run-doctor.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMAGES = `${ROOT}examples/images`;
const silent = createLogger({ level: 'silent', format: 'json' });
const MINUTE = 60_000;

interface Host {
  handle: VefaasLocalHandle;
  close(): Promise<void>;
}

async function startHost(options: VefaasLocalOptions = {}): Promise<Host> {
  const handle = await startVefaasLocal({ imagesDir: IMAGES, logger: silent, ...options });
  return { handle, close: () => handle.close() };
}

/** A target on `host` with the given credentials, route and clock. */
function targetOf(
  host: VefaasLocalHandle,
  o: { accessKeyId?: string; secretAccessKey?: string; route?: string; gatewayKey?: string; now?: () => number } = {},
): VefaasTarget {
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: {
      accessKeyId: o.accessKeyId ?? host.accessKeyId,
      secretAccessKey: o.secretAccessKey ?? host.secretAccessKey,
    },
    retry: false,
    ...(o.now ? { now: () => new Date(o.now!()) } : {}),
  });
  return {
    vefaas,
    functionId: host.functionId,
    gatewayUrl: o.route ?? host.gatewayUrl,
    ...(o.gatewayKey ? { gatewayKey: o.gatewayKey } : {}),
  };
}

async function doctor(
  host: VefaasLocalHandle,
  target: VefaasTarget,
  extra: Partial<DoctorOptions> = {},
): Promise<Record<string, CheckLine>> {
  try {
    const report = await runDoctor({
      target,
      endpoint: host.controlPlaneUrl,
      region: host.region,
      image: 'pyutils',
      startupTimeoutS: 20,
      ...extra,
    });
    return Object.fromEntries(report.lines.map((line) => [line.name, line]));
  } finally {
    await target.vefaas.close();
  }
}

const statuses = (lines: Record<string, CheckLine>) =>
  Object.fromEntries(Object.entries(lines).map(([name, line]) => [name, line.status]));
const ALL = ['credentials', 'clock', 'gateway route', 'sandbox start', 'alive', 'tools', 'command', 'kill'];

async function expectNoSandboxLeft(host: VefaasLocalHandle): Promise<void> {
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
  });
  try {
    const left = await vefaas.listAllSandboxes({ FunctionId: host.functionId });
    expect(left.filter((s) => s.Status !== 'Terminating')).toEqual([]);
  } finally {
    await vefaas.close();
  }
}

const madeImages = mkdtempSync(join(tmpdir(), 'rf-doctor-images-'));
afterAll(() => rmSync(madeImages, { recursive: true, force: true }));

/** An image directory made by the test: `files` maps a path inside it to its content. */
function testImage(name: string, files: Record<string, string>): string {
  const dir = join(madeImages, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** vefaas-local's own listing (admin route), with each sandbox's status. */
async function fetchSandboxes(host: VefaasLocalHandle): Promise<Array<{ id: string; status: string }>> {
  const res = await request(`${host.controlPlaneUrl}/_admin/sandboxes`);
  return ((await res.body.json()) as { sandboxes: Array<{ id: string; status: string }> }).sandboxes;
}

afterAll(() => closeSharedDispatchers());

describeWith([bwrapNeed()], 'rollout-fleet doctor against vefaas-local', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost();
  });
  afterAll(async () => {
    await host?.close();
  });

  it('passes every check on a healthy setup, in order, with timings, and kills its sandbox', async () => {
    const lines = await doctor(host.handle, targetOf(host.handle));
    expect(Object.keys(lines)).toEqual(ALL);
    expect(statuses(lines)).toEqual(Object.fromEntries(ALL.map((name) => [name, 'ok'])));
    expect(lines.credentials?.detail).toContain(`function ${host.handle.functionId}`);
    expect(lines.clock?.detail).toMatch(/^this clock is \d+\.\d s (behind|ahead of) the control plane/);
    expect(lines['gateway route']?.detail).toBe(
      'answers; a made-up instance is reported gone (HTTP 404 InstanceNotFound)',
    );
    expect(lines.tools?.detail).toMatch(
      /str_replace_editor on PATH \(\/root\/tools\/rollout-fleet\/bin\/str_replace_editor\)/,
    );
    expect(lines.command?.detail).toBe('echo → "rollout-fleet doctor"');
    for (const line of Object.values(lines)) expect(line.ms).toBeGreaterThanOrEqual(0);
    await expectNoSandboxLeft(host.handle);
  });

  it('bad keys: names the wrong part of the pair, and starts no sandbox', async () => {
    const wrongSecret = await doctor(host.handle, targetOf(host.handle, { secretAccessKey: 'not-the-secret' }));
    expect(wrongSecret.credentials).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('SignatureDoesNotMatch'),
      fix: expect.stringContaining('VEFAAS_SECRET_KEY does not belong to VEFAAS_ACCESS_KEY'),
    });
    expect(statuses(wrongSecret)).toMatchObject({
      'sandbox start': 'skip',
      alive: 'skip',
      tools: 'skip',
      command: 'skip',
      kill: 'skip',
    });
    const wrongKey = await doctor(host.handle, targetOf(host.handle, { accessKeyId: 'AKLTnobody' }));
    expect(wrongKey.credentials).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('InvalidAccessKey'),
      fix: expect.stringContaining('VEFAAS_ACCESS_KEY is not an active access key'),
    });
    expect(formatCheckLine(wrongKey.credentials!)).toMatch(
      /^FAILED credentials +\d+\.\d\ds {2}veFaaS ListSandboxes failed with InvalidAccessKey.* — fix: VEFAAS_ACCESS_KEY is not/,
    );
    await expectNoSandboxLeft(host.handle);
  });

  it('skewed clock: half an hour off fails the clock check and explains the refused signature', async () => {
    const skewed = () => Date.now() + 30 * MINUTE;
    const lines = await doctor(host.handle, targetOf(host.handle, { now: skewed }), { now: skewed });
    expect(lines.clock).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^this clock is 1(79|80)\d\.\d s ahead of the control plane/),
      fix: expect.stringContaining('sync this machine'),
    });
    expect(lines.credentials).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('InvalidTimestamp'),
      fix: expect.stringContaining("this machine's clock is off"),
    });
    // Five minutes off still signs (vefaas-local allows 15), but is worth a warning.
    const drifting = () => Date.now() - 5 * MINUTE;
    const warned = await doctor(host.handle, targetOf(host.handle, { now: drifting }), { now: drifting });
    expect(warned.clock).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(
        /^this clock is (29\d|30\d)\.\d s behind the control plane.*signatures may be refused$/,
      ),
    });
    expect(warned.credentials?.status).toBe('ok');
    expect(warned.kill?.status).toBe('ok');
  });

  it('a sandbox that fails to start: the platform error and its fix, no later checks, the sandbox killed', async () => {
    const lines = await doctor(host.handle, targetOf(host.handle), { image: 'no-such-image' });
    expect(lines['sandbox start']).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/Failed: function_initialize_failed/),
      fix: expect.stringContaining('the image (no-such-image) could not be pulled'),
    });
    expect(statuses(lines)).toMatchObject({ alive: 'skip', tools: 'skip', command: 'skip', kill: 'ok' });
    await expectNoSandboxLeft(host.handle);
  });

  it('a route that leads elsewhere: the route answers, but the alive check blames the route', async () => {
    const wrong = `${host.handle.gatewayUrl.replace(/\/fn\/[^/]+$/, '')}/fn/some-other-function`;
    const lines = await doctor(host.handle, targetOf(host.handle, { route: wrong }), { routeMismatchAfterMs: 1000 });
    expect(lines['gateway route']?.status).toBe('ok');
    expect(lines.alive).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('while the control plane has it Ready'),
      fix: expect.stringContaining('VEFAAS_FUNCTION_ROUTE'),
    });
    expect(statuses(lines)).toMatchObject({ 'sandbox start': 'ok', tools: 'skip', command: 'skip', kill: 'ok' });
  });

  it('the CLI: one line per check, exit 0 when all pass, 1 on bad keys, 4 when the control plane is unreachable', async () => {
    const cli = async (env: Record<string, string>): Promise<{ code: number | null; stdout: string }> => {
      const inherited = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(RF_|VEFAAS_|VOLCE|REDIS_URL|LOG_)/.test(name)),
      );
      const child = spawn(
        process.execPath,
        [`${ROOT}bin/rollout-fleet.js`, 'doctor', '--image', 'pyutils', '--startup-timeout-s', '10'],
        {
          env: { ...inherited, LOG_LEVEL: 'silent', ...env },
          stdio: ['ignore', 'pipe', 'inherit'],
          cwd: ROOT,
        },
      );
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, stdout };
    };
    try {
      const cloud = {
        VEFAAS_ENDPOINT: host.handle.controlPlaneUrl,
        VEFAAS_FUNCTION_ROUTE: host.handle.gatewayUrl,
        VEFAAS_FUNCTION_ID: host.handle.functionId,
        VEFAAS_ACCESS_KEY: host.handle.accessKeyId,
        VEFAAS_SECRET_KEY: host.handle.secretAccessKey,
      };
      const healthy = await cli(cloud);
      expect(healthy.code, healthy.stdout).toBe(0);
      const rows = healthy.stdout.trim().split('\n');
      expect(rows[0]).toMatch(
        /^doctor: veFaaS http:\/\/127\.0\.0\.1:\d+ \(function fn-\w+, region cn-beijing\); route .*; image pyutils$/,
      );
      expect(rows.slice(1, -1).map((row) => row.slice(7, 21).trim())).toEqual(ALL);
      for (const row of rows.slice(1, -1)) expect(row).toMatch(/^ok {5}\S.{13} +\d+\.\d\ds {2}\S/);
      expect(rows.at(-1)).toMatch(/^doctor: all checks passed in \d+\.\ds$/);

      const badKeys = await cli({ ...cloud, VEFAAS_SECRET_KEY: 'wrong' });
      expect(badKeys.code).toBe(1);
      expect(badKeys.stdout).toMatch(/FAILED credentials .* — fix: VEFAAS_SECRET_KEY does not belong/);
      expect(badKeys.stdout).toContain('doctor: 1 check(s) failed (credentials)');

      const unreachable = await cli({ ...cloud, VEFAAS_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
      expect(unreachable.code).toBe(4);
      expect(unreachable.stdout).toMatch(/FAILED credentials .* — fix: check VEFAAS_ENDPOINT/);
    } finally {
      await expectNoSandboxLeft(host.handle);
    }
  });

  it('a kill that fails: every other check passes, the kill line fails with the error and says to kill it in the console', async () => {
    host.handle.faults.configure({
      controlPlane: { answer: { KillSandbox: { code: 'InternalError', status: 500, message: 'kill refused' } } },
    });
    let lines: Record<string, CheckLine>;
    try {
      lines = await doctor(host.handle, targetOf(host.handle));
    } finally {
      host.handle.faults.reset();
    }
    expect(statuses(lines)).toEqual({ ...Object.fromEntries(ALL.map((name) => [name, 'ok'])), kill: 'fail' });
    expect(lines.kill).toMatchObject({
      detail: expect.stringContaining('kill refused'),
      fix: expect.stringMatching(/^kill \S+ in the console: until then it runs \(and costs\)/),
    });
    // The sandbox the failed kill left running is the one the fix names; kill it now the fault is lifted.
    const left = await fetchSandboxes(host.handle);
    const running = left.filter((s) => s.status === 'Ready');
    expect(running.map((s) => s.id)).toHaveLength(1);
    expect(lines.kill?.fix).toContain(running[0]!.id);
    const vefaas = targetOf(host.handle).vefaas;
    try {
      await vefaas.killSandbox({ FunctionId: host.handle.functionId, SandboxId: running[0]!.id });
    } finally {
      await vefaas.close();
    }
    await expectNoSandboxLeft(host.handle);
  });

  it('a sandbox whose server never answers its health check: Failed function_health_check_failed names port 8000 and the token', async () => {
    // The platform's health check gives up before the SWE-ReX server is up (1 ms here). A CreateSandbox that
    // answers at once leaves the sandbox Failed for DescribeSandbox; one that waits answers UserTimeoutError.
    const health =
      'the start command did not bring up a server on port 8000: it must run SWE-ReX on 0.0.0.0:8000 with the token';
    const immediate = await startHost({ coldStartTimeoutMs: 1, createReturns: 'immediately' });
    try {
      const lines = await doctor(immediate.handle, targetOf(immediate.handle));
      expect(lines['sandbox start']).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/Failed: function_health_check_failed — server not alive within 1 ms/),
        fix: expect.stringContaining(health),
      });
      expect(statuses(lines)).toMatchObject({ alive: 'skip', tools: 'skip', command: 'skip', kill: 'ok' });
    } finally {
      await immediate.close();
    }
    const waiting = await startHost({ coldStartTimeoutMs: 1 });
    try {
      const lines = await doctor(waiting.handle, targetOf(waiting.handle));
      expect(lines['sandbox start']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('UserTimeoutError'),
        fix: expect.stringContaining(health),
      });
      expect(statuses(lines)).toMatchObject({ alive: 'skip', tools: 'skip', command: 'skip' });
      expect(waiting.handle.liveSandboxes()).toBe(0);
    } finally {
      await waiting.close();
    }
  });

  it('a SWE-ReX server that refuses the token (an image starting it with its own): alive fails naming the refused key, and the start-command fix', async () => {
    const image = testImage('own-token', {
      '.rollout-fleet-image.json': '{"auth_token": "baked-into-the-image"}',
      'README.md': 'x\n',
    });
    const lines = await doctor(host.handle, targetOf(host.handle), { image: `file:${image}` });
    expect(statuses(lines)).toMatchObject({
      credentials: 'ok',
      'sandbox start': 'ok',
      alive: 'fail',
      tools: 'skip',
      command: 'skip',
      kill: 'ok',
    });
    expect(lines.alive).toMatchObject({
      detail: 'SWE-ReX rejected the API key on /is_alive: Invalid API Key',
      fix: 'SWE-ReX refused the token: the start command must pass the token the worker generates (keep {auth_token}, or a trailing token argument, in it)',
    });
    await expectNoSandboxLeft(host.handle);
  });

  it('an image whose .bashrc prints on every prompt: the command check names the stray output and the .bashrc fix', async () => {
    const bashrc = "PROMPT_COMMAND='echo welcome to the image'\n";
    const image = testImage('noisy-bashrc', {
      '.rollout-fleet-image.json': JSON.stringify({ bashrc }),
      'README.md': 'x\n',
    });
    const lines = await doctor(host.handle, targetOf(host.handle), { image: `file:${image}` });
    expect(lines.command).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('welcome to the image'),
      fix: "the session's output is not the command's: check the image's shell start-up files (.bashrc) print nothing",
    });
    expect(statuses(lines)).toMatchObject({ 'sandbox start': 'ok', alive: 'ok', tools: 'ok', kill: 'ok' });
    await expectNoSandboxLeft(host.handle);
  });

  it('an image whose PATH has no python3: the tools check fails at the install, saying the bundle needs python3', async () => {
    // The jail shares this machine's /usr (the server itself runs on its python3), so the image's .bashrc builds a
    // PATH of every /usr/bin program except python: what a session on an image without python3 sees. One `ln` for all
    // of them: a fork per program took longer than the session's start-up on a loaded machine.
    const bashrc =
      'mkdir -p /root/nopython && ln -sf /usr/bin/* /root/nopython/ && rm -f /root/nopython/python*; export PATH=/root/nopython\n';
    const image = testImage('no-python', {
      '.rollout-fleet-image.json': JSON.stringify({ bashrc }),
      'README.md': 'x\n',
    });
    const lines = await doctor(host.handle, targetOf(host.handle), { image: `file:${image}` });
    expect(lines.tools).toMatchObject({
      status: 'fail',
      // The install itself says so (as on veFaaS), before any tool is run.
      detail: expect.stringMatching(/^the tool set-up failed \(exit 1\): the tools need python3 on the image's PATH/),
      fix: 'installing the tool bundle needs python3 (3.8+) on the image\'s PATH and a writable /root (docs/vefaas.md, "Sandbox images")',
    });
    expect(statuses(lines)).toMatchObject({ 'sandbox start': 'ok', alive: 'ok', command: 'skip', kill: 'ok' });
    await expectNoSandboxLeft(host.handle);
  });

  it('an unreachable route: named as unreachable, and alive times out with the port to check', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/fn/${host.handle.functionId}`;
    const lines = await doctor(host.handle, targetOf(host.handle, { route: closed }), { startupTimeoutS: 2 });
    expect(lines['gateway route']).toMatchObject({
      status: 'fail',
      unreachable: true,
      fix: expect.stringContaining('access address'),
    });
    expect(lines.alive).toMatchObject({ status: 'fail', fix: expect.stringContaining('0.0.0.0:8000') });
    expect(lines.kill?.status).toBe('ok');
  });
});

describe('rollout-fleet doctor: what needs no sandbox', () => {
  it('a route that wants a gateway key: says to set VEFAAS_GATEWAY_KEY', async () => {
    const host = await startHost({ isolation: 'emulated', gateway: { key: 'route-key' } });
    try {
      const lines = await doctor(host.handle, targetOf(host.handle), { startupTimeoutS: 2 });
      expect(lines['gateway route']).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining('set VEFAAS_GATEWAY_KEY'),
      });
      expect(lines.alive).toMatchObject({ status: 'fail', fix: expect.stringContaining('VEFAAS_GATEWAY_KEY') });
      const keyed = await doctor(host.handle, targetOf(host.handle, { gatewayKey: 'route-key' }));
      expect(keyed['gateway route']?.status).toBe('ok');
    } finally {
      await host.close();
    }
  });

  it('a function id the account does not have: names VEFAAS_FUNCTION_ID and the region, starts nothing', async () => {
    const host = await startHost({ isolation: 'emulated' });
    try {
      const lines = await doctor(host.handle, { ...targetOf(host.handle), functionId: 'fn-nobody' });
      expect(lines.credentials).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining(
          `VEFAAS_FUNCTION_ID fn-nobody is not a sandbox application in ${host.handle.region}`,
        ),
      });
      expect(statuses(lines)).toMatchObject({ 'sandbox start': 'skip', kill: 'skip' });
      expect(host.handle.liveSandboxes()).toBe(0);
    } finally {
      await host.close();
    }
  });

  it('a key pair without a veFaaS policy: AccessDenied on the signed read says to grant one, starts nothing', async () => {
    const host = await startHost({
      isolation: 'emulated',
      faults: { controlPlane: { answer: { ListSandboxes: { code: 'AccessDenied', status: 403 } } } },
    });
    try {
      const lines = await doctor(host.handle, targetOf(host.handle));
      expect(lines.credentials).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('AccessDenied'),
        fix: 'the key pair may not call veFaaS: give its user a veFaaS policy (e.g. VEFAASFullAccess) in the console',
      });
      expect(lines.credentials?.unreachable).toBeUndefined();
      expect(statuses(lines)).toMatchObject({
        clock: 'ok',
        'gateway route': 'ok',
        'sandbox start': 'skip',
        kill: 'skip',
      });
      expect(host.handle.liveSandboxes()).toBe(0);
    } finally {
      await host.close();
    }
  });

  it('an account at its create rate: CreateSandbox throttled (429) says to wait or raise the quota, nothing to kill', async () => {
    const host = await startHost({ isolation: 'emulated', faults: { throttle: { createPerSecond: 0 } } });
    try {
      const lines = await doctor(host.handle, targetOf(host.handle));
      expect(lines.credentials?.status).toBe('ok');
      expect(lines['sandbox start']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('AccountFlowLimitExceeded'),
        fix: expect.stringContaining('CreateSandbox rate or instance quota'),
      });
      expect(statuses(lines)).toMatchObject({ alive: 'skip', tools: 'skip', command: 'skip', kill: 'skip' });
      expect(lines.kill?.detail).toBe('no sandbox was created');
    } finally {
      await host.close();
    }
  });

  it('a cold start slower than --startup-timeout-s: says to raise it, and kills the sandbox still starting', async () => {
    // CreateSandbox answers at once (as the real one does), the sandbox stays Starting for 5 s.
    const host = await startHost({
      isolation: 'emulated',
      createReturns: 'immediately',
      faults: { coldStart: { delayMs: 5000 } },
    });
    try {
      const lines = await doctor(host.handle, targetOf(host.handle), { startupTimeoutS: 1 });
      expect(lines['sandbox start']).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/still Starting after 1\.0 s$/),
        fix: expect.stringContaining('raise it'),
      });
      expect(statuses(lines)).toMatchObject({ alive: 'skip', kill: 'ok' });
      expect(host.handle.liveSandboxes()).toBe(0);
    } finally {
      await host.close();
    }
  });

  it('a route whose upstream fails (gateway 5xx): says the application may not be released', async () => {
    const host = await startHost({ isolation: 'emulated', faults: { gateway: { errorRate: 1 } } });
    try {
      const lines = await doctor(host.handle, targetOf(host.handle), { startupTimeoutS: 2 });
      expect(lines['gateway route']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('502'),
        fix: expect.stringContaining('released'),
      });
      expect(lines.kill?.status).toBe('ok');
    } finally {
      await host.close();
    }
  });
});
