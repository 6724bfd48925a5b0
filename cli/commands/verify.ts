/**
 * `rollout-fleet verify`: the seed's minimal verification (seed.md), step by step, one line per step.
 * Against real veFaaS when the cloud settings are set, else against an embedded vefaas-local.
 * Offline (no pip install; the demo script uses the standard library instead of numpy) when told so
 * (`--offline`), or by default when the sandboxes are local: the embedded host, or a sandbox-host on a
 * loopback address (its sandboxes have no network). `--no-offline` forces the pip step.
 */
import { isIP } from 'node:net';
import type { Command } from 'commander';
import type { AgentEnv } from '@rollout-fleet/sandbox';
import { EXIT } from '../exit-codes.js';

interface Step {
  name: string;
  run: (env: AgentEnv) => Promise<string | void>;
  /** Needs the sandbox to reach a package index. */
  online?: boolean;
}

/** Why verify runs offline, or undefined when it runs the pip step. */
export function offlineReason(options: {
  offlineFlag?: boolean;
  embedded: boolean;
  endpoints: readonly string[];
}): string | undefined {
  if (options.offlineFlag === true) return 'offline: --offline';
  if (options.offlineFlag === false) return undefined;
  if (options.embedded) return 'offline: embedded vefaas-local';
  if (options.endpoints.some(isLoopbackUrl)) return 'offline: the sandbox host is on this machine (loopback)';
  return undefined;
}

function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1';
}

function expectOutput(actual: string, expected: string | RegExp, what: string): string {
  const trimmed = actual.trim();
  const ok = typeof expected === 'string' ? trimmed === expected : expected.test(trimmed);
  if (!ok) throw new Error(`${what}: expected ${String(expected)}, got ${JSON.stringify(trimmed.slice(0, 200))}`);
  return trimmed;
}

export function verifySteps(online: boolean): Step[] {
  const script = online ? 'import numpy\nprint(numpy.array([1, 2, 3]).sum())\n' : 'print(sum([1, 2, 3]))\n';
  return [
    {
      name: 'install tools (execute_bash, str_replace_editor)',
      run: (env) => env.installTools(['execute_bash', 'str_replace_editor']),
    },
    {
      name: 'which str_replace_editor',
      run: async (env) =>
        expectOutput(await env.communicate('which str_replace_editor'), /\/str_replace_editor$/, 'tool path'),
    },
    {
      name: 'pip install numpy -q',
      online: true,
      run: async (env) => void (await env.communicate('pip install numpy -q', { timeoutS: 300 })),
    },
    {
      name: 'str_replace_editor create --path /tmp/demo.py',
      run: async (env) => {
        const { shellQuote } = await import('@rollout-fleet/sandbox');
        const command = `str_replace_editor create --path /tmp/demo.py --file_text ${shellQuote(script)}`;
        return expectOutput(await env.communicate(command), /File created successfully/, 'create');
      },
    },
    {
      name: "execute_bash 'python3 /tmp/demo.py > /tmp/demo_out.txt'",
      run: async (env) => void (await env.communicate("execute_bash 'python3 /tmp/demo.py > /tmp/demo_out.txt'")),
    },
    {
      name: 'cat /tmp/demo_out.txt',
      run: async (env) => expectOutput(await env.communicate('cat /tmp/demo_out.txt'), '6', 'script output'),
    },
  ];
}

export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('Prove a sandbox works end to end: start, install tools, edit and run a script, read its output.')
    .option('--image <image>', 'sandbox image (default RF_SANDBOX_IMAGE; embedded vefaas-local: "python")')
    .option(
      '--offline',
      'skip `pip install numpy`; the script uses the standard library (default when sandboxes are local)',
    )
    .option('--no-offline', 'run the pip step even against a local sandbox host')
    .addHelpText(
      'after',
      '\nOffline by default when sandboxes are local: the embedded vefaas-local (no VEFAAS_* cloud settings), or\n' +
        'VEFAAS_ENDPOINT / VEFAAS_FUNCTION_ROUTE on a loopback address (a `rollout-fleet sandbox-host` here; its\n' +
        'sandboxes have no network). Against real veFaaS the pip step runs unless --offline is given.\n' +
        '\nExit codes: 0 every step passed, 1 a step failed (named on stderr), 3 invalid configuration.',
    )
    .action(async (flags: { image?: string; offline?: boolean }) => {
      process.exitCode = await runVerify(flags);
    });
}

async function runVerify(flags: { image?: string; offline?: boolean }): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  let closeTarget: (() => Promise<void>) | undefined;
  try {
    const { config, logger } = loadContext();
    const cloud = config.vefaas.mode === 'cloud';
    const { SandboxSpecSchema } = await import('@rollout-fleet/shared');
    const { AgentEnv, closeSharedDispatchers } = await import('@rollout-fleet/sandbox');
    const { openTarget } = await import('../runtime/target.js');
    const opened = await openTarget(config, logger);
    closeTarget = async () => {
      await opened.close();
      await closeSharedDispatchers();
    };
    const offline = offlineReason({
      ...(flags.offline === undefined ? {} : { offlineFlag: flags.offline }),
      embedded: !cloud,
      endpoints: config.vefaas.mode === 'cloud' ? [config.vefaas.endpoint, config.vefaas.functionRoute] : [],
    });
    console.log(`verify: sandboxes from ${opened.description}${offline ? ` (${offline})` : ''}`);
    const image = flags.image ?? config.sandbox.image ?? (cloud ? undefined : 'python');
    if (!image) {
      console.error('verify: no image: pass --image or set RF_SANDBOX_IMAGE');
      return EXIT.INVALID_INPUT;
    }
    const env = new AgentEnv({
      target: opened.target,
      sandbox: SandboxSpecSchema.parse({
        image,
        startup_timeout_s: config.sandbox.startupTimeoutS,
        env: { PIP_PROGRESS_BAR: 'off' },
      }),
      metadata: { 'rf-role': 'verify' },
      defaultTimeoutS: config.sandbox.stepTimeoutS,
      logger,
    });
    const line = (ok: boolean, name: string, ms: number, note = ''): void =>
      console.log(
        `${ok ? 'ok    ' : 'FAILED'} ${name.padEnd(58)} ${(ms / 1000).toFixed(2).padStart(6)}s${note ? `  ${note}` : ''}`,
      );
    let failed: string | undefined;
    const timed = async (name: string, fn: () => Promise<string | void>): Promise<boolean> => {
      const started = performance.now();
      try {
        const note = await fn();
        line(true, name, performance.now() - started, typeof note === 'string' ? note : '');
        return true;
      } catch (err) {
        line(false, name, performance.now() - started);
        failed = `${name}: ${err instanceof Error ? err.message : String(err)}`;
        return false;
      }
    };
    try {
      let ok = await timed('start sandbox (create, wait until alive, session)', async () => {
        const t = await env.start();
        return `${env.sandboxId} alive after ${(t.aliveMs / 1000).toFixed(2)}s`;
      });
      for (const step of verifySteps(offline === undefined)) {
        if (!ok) break;
        if (step.online && offline !== undefined) {
          console.log(`skip   ${step.name.padEnd(58)}         ${offline}; the script uses the standard library`);
          continue;
        }
        ok = await timed(step.name, () => step.run(env));
      }
    } finally {
      await timed('close (session closed, sandbox killed)', () => env.close());
    }
    if (failed) {
      console.error(`verify: failed at "${failed}"`);
      return EXIT.FAILURE;
    }
    console.log('verify: every step passed');
    return EXIT.OK;
  } catch (err) {
    return reportFailure('verify', err);
  } finally {
    await closeTarget?.();
  }
}
