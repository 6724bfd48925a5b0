/**
 * `rollout-fleet doctor`: is this machine ready to run episodes on this veFaaS account? One line per check,
 * with its timing and, on failure, what to fix:
 *   credentials    a signed, read-only ListSandboxes on the function (keys, region, function id)
 *   clock          this clock against the control plane's Date header (signatures carry the time)
 *   gateway route  the function's route answers, without gateway-auth or 5xx trouble
 *   sandbox start  CreateSandbox → DescribeSandbox until Ready (image, start command, quota)
 *   alive          SWE-ReX /is_alive through the route, pinned by X-Faas-Instance-Name, and a bash session
 *   tools          the tool bundle installs (execute_bash, str_replace_editor), is on PATH and runs (python3)
 *   command        one command's output comes back exactly
 *   kill           KillSandbox, and the control plane stops listing the sandbox as running
 * The sandbox chain needs working credentials; a sandbox that was created is always killed.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import {
  AGENT_ENV_LABEL_KEY,
  AgentEnv,
  SwerexClient,
  buildStartCommand,
  classifyGatewayResponse,
  createSandboxRequest,
  type VefaasTarget,
} from '@rollout-fleet/sandbox';
import { SandboxSpecSchema, coerceError, type RolloutError, type SandboxSpec } from '@rollout-fleet/shared';
import { CheckFailure, type CheckLine, type CheckOutcome } from './doctor-types.js';
import {
  aliveFailure,
  credentialsFailure,
  failedSandboxFix,
  routeDoesNotReachFix,
  startFailure,
  type FixContext,
} from './fixes.js';

const SECOND_MS = 1000;
/** Beyond this the platform may refuse signatures (its window is undocumented; vefaas-local allows 15 min). */
const SKEW_WARN_MS = 60 * SECOND_MS;
const SKEW_FAIL_MS = 15 * 60 * SECOND_MS;
/** A Ready sandbox the route keeps calling "gone" this long is not behind this route. */
const ROUTE_MISMATCH_AFTER_MS = 10 * SECOND_MS;
const MARKER = 'rollout-fleet doctor';

export interface DoctorOptions {
  target: VefaasTarget;
  /** The control-plane endpoint (for the clock check and messages). */
  endpoint: string;
  region: string;
  image: string;
  /** Start command template (default: the worker's). */
  command?: string;
  startupTimeoutS: number;
  /** This machine's clock, ms since the epoch (injected by tests). @defaultValue Date.now */
  now?: () => number;
  /** How long a Ready sandbox may be called "gone" by the route before the route is blamed. @defaultValue 10 s */
  routeMismatchAfterMs?: number;
  /** Receives each line as soon as its check ends. */
  onLine?: (line: CheckLine) => void;
}

export interface DoctorReport {
  lines: CheckLine[];
  ok: boolean;
  /** Some failure was "could not reach" (exit 4) rather than "refused" (exit 1). */
  unreachable: boolean;
}

function seconds(ms: number): string {
  return `${(ms / SECOND_MS).toFixed(1)} s`;
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { target } = options;
  const now = options.now ?? Date.now;
  const fixes: FixContext = {
    endpoint: options.endpoint,
    route: target.gatewayUrl,
    functionId: target.functionId,
    region: options.region,
    image: options.image,
    startupTimeoutS: options.startupTimeoutS,
  };
  const lines: CheckLine[] = [];
  const check = async (name: string, body: () => Promise<CheckOutcome | string>): Promise<boolean> => {
    const started = performance.now();
    let outcome: CheckOutcome;
    try {
      const result = await body();
      outcome = typeof result === 'string' ? { status: 'ok', detail: result } : result;
    } catch (thrown) {
      const failure =
        thrown instanceof CheckFailure
          ? thrown
          : new CheckFailure(coerceError(thrown).message, coerceError(thrown).hint);
      outcome = {
        status: 'fail',
        detail: failure.message,
        fix: failure.fix,
        ...(failure.unreachable ? { unreachable: true } : {}),
      };
    }
    const line: CheckLine = { name, ms: performance.now() - started, ...outcome };
    lines.push(line);
    options.onLine?.(line);
    return outcome.status === 'ok' || outcome.status === 'warn';
  };
  const skip = (name: string, why: string): void => {
    const line: CheckLine = { name, ms: 0, status: 'skip', detail: why };
    lines.push(line);
    options.onLine?.(line);
  };

  const credentialsOk = await check('credentials', async () => {
    try {
      const listed = await target.vefaas.listSandboxes({ FunctionId: target.functionId, PageSize: 1 }, { once: true });
      return `signed ListSandboxes accepted; function ${target.functionId} has ${listed.Total ?? 0} sandbox(es)`;
    } catch (thrown) {
      throw credentialsFailure(thrown, fixes);
    }
  });

  await check('clock', () => clockSkew(options.endpoint, now));
  await check('gateway route', () => routeAnswers(target));

  const sandboxChecks = ['sandbox start', 'alive', 'tools', 'command', 'kill'];
  if (!credentialsOk) {
    for (const name of sandboxChecks) skip(name, 'needs working credentials');
    return summarize(lines);
  }

  const spec: SandboxSpec = SandboxSpecSchema.parse({
    image: options.image,
    ...(options.command ? { command: options.command } : {}),
    startup_timeout_s: options.startupTimeoutS,
    lifetime_s: 5 * 60,
  });
  const start = buildStartCommand(spec.command);
  let sandboxId: string | undefined;
  let env: AgentEnv | undefined;
  try {
    const started = await check('sandbox start', async () => {
      const t0 = now();
      try {
        const created = await target.vefaas.createSandbox(
          createSandboxRequest({
            functionId: target.functionId,
            sandbox: spec,
            command: start.command,
            metadata: { 'rf-role': 'doctor', [AGENT_ENV_LABEL_KEY]: randomUUID() },
          }),
          { once: true },
        );
        sandboxId = created.SandboxId;
        return await waitUntilReady(
          target,
          created.SandboxId,
          options.startupTimeoutS * SECOND_MS,
          fixes,
          () => now() - t0,
        );
      } catch (thrown) {
        throw startFailure(thrown, fixes);
      }
    });
    const alive =
      started &&
      (await check('alive', async () => {
        const id = sandboxId as string;
        try {
          await waitUntilReachable(
            {
              target,
              sandboxId: id,
              authToken: start.authToken,
              timeoutMs: options.startupTimeoutS * SECOND_MS,
              mismatchAfterMs: options.routeMismatchAfterMs ?? ROUTE_MISMATCH_AFTER_MS,
            },
            fixes,
          );
          env = AgentEnv.attach({ target, sandbox: spec, sandboxId: id, authToken: start.authToken });
          await env.ready({ timeoutMs: options.startupTimeoutS * SECOND_MS });
        } catch (thrown) {
          throw aliveFailure(thrown, fixes);
        }
        return `SWE-ReX answers through the route pinned to ${id}; bash session open`;
      }));
    const tooled =
      alive &&
      (await check('tools', async () => {
        try {
          await env!.installTools(['execute_bash', 'str_replace_editor']);
          const said = (await env!.communicate('which execute_bash str_replace_editor')).trim().split('\n');
          // Only the two paths count: stray output from the shell's start-up files is the command check's to name.
          const where = ['execute_bash', 'str_replace_editor'].map((tool) =>
            said.find((line) => line.startsWith('/') && line.endsWith(`/${tool}`)),
          );
          if (!where.every((path) => path !== undefined))
            throw new Error(`the tools are not on PATH: which said ${JSON.stringify(said.join(' '))}`);
          // Installing only copies files: run one, or an image without python3 would pass here and fail every episode.
          const ran = await env!.run('str_replace_editor --help 2>&1 >/dev/null');
          if (ran.exitCode !== 0)
            throw new Error(
              `str_replace_editor --help exited ${String(ran.exitCode)}: ${ran.output.trim().slice(0, 200)}`,
            );
          return `execute_bash, str_replace_editor on PATH (${where[1]})`;
        } catch (thrown) {
          throw new CheckFailure(
            coerceError(thrown).message,
            'installing the tool bundle needs python3 (3.8+) on the image\'s PATH and a writable /root (docs/vefaas.md, "Sandbox images")',
          );
        }
      }));
    if (tooled) {
      await check('command', async () => {
        const output = await env!.communicate(`echo ${JSON.stringify(MARKER)}`);
        if (output.trim() !== MARKER)
          throw new CheckFailure(
            `echo answered ${JSON.stringify(output.slice(0, 200))}`,
            "the session's output is not the command's: check the image's shell start-up files (.bashrc) print nothing",
          );
        return `echo → ${JSON.stringify(MARKER)}`;
      });
    } else {
      for (const name of sandboxChecks.slice(alive ? 3 : started ? 2 : 1, 4)) skip(name, 'needs the checks above');
    }
  } finally {
    if (sandboxId === undefined) skip('kill', 'no sandbox was created');
    else await check('kill', () => killAndConfirm(target, sandboxId as string, env));
  }
  return summarize(lines);
}

function summarize(lines: CheckLine[]): DoctorReport {
  return {
    lines,
    ok: lines.every((l) => l.status !== 'fail'),
    unreachable: lines.some((l) => l.status === 'fail' && l.unreachable === true),
  };
}

/** The control plane's Date header against this clock (1 s resolution; the midpoint of the round trip). */
async function clockSkew(endpoint: string, now: () => number): Promise<CheckOutcome | string> {
  const before = now();
  let date: string | undefined;
  try {
    const res = await request(endpoint, { method: 'GET', headersTimeout: 10 * SECOND_MS, bodyTimeout: 10 * SECOND_MS });
    await res.body.dump();
    const header = res.headers.date;
    date = Array.isArray(header) ? header[0] : header;
  } catch (thrown) {
    throw new CheckFailure(
      `no answer from ${endpoint}: ${coerceError(thrown).message}`,
      'check VEFAAS_ENDPOINT and the network',
      true,
    );
  }
  const after = now();
  const server = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(server))
    return { status: 'warn', detail: `the control plane sent no usable Date header (${date ?? 'none'}); skew unknown` };
  // The header is truncated to whole seconds: compare with the middle of that second.
  const skew = server + SECOND_MS / 2 - (before + after) / 2;
  const text = `this clock is ${seconds(Math.abs(skew))} ${skew > 0 ? 'behind' : 'ahead of'} the control plane (Date header, ±1 s)`;
  if (Math.abs(skew) > SKEW_FAIL_MS)
    throw new CheckFailure(
      text,
      "signed requests will be refused: sync this machine's clock (`sudo timedatectl set-ntp true`, or `chronyc makestep`)",
    );
  if (Math.abs(skew) > SKEW_WARN_MS)
    return { status: 'warn', detail: `${text}; signatures may be refused`, fix: "sync this machine's clock (NTP)" };
  return text;
}

/** A request pinned to a made-up instance: a working route answers as a gateway does for an unknown instance. */
async function routeAnswers(target: VefaasTarget): Promise<CheckOutcome | string> {
  const probe = `rf-doctor-${randomUUID().slice(0, 8)}`;
  const url = `${target.gatewayUrl.replace(/\/+$/, '')}/is_alive`;
  let status: number;
  let body: string;
  let headers: Record<string, string | string[] | undefined>;
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { 'x-faas-instance-name': probe, ...(target.gatewayKey ? { authorization: target.gatewayKey } : {}) },
      headersTimeout: 10 * SECOND_MS,
      bodyTimeout: 10 * SECOND_MS,
    });
    status = res.statusCode;
    headers = res.headers;
    body = await res.body.text();
  } catch (thrown) {
    throw new CheckFailure(
      `no answer from ${url}: ${coerceError(thrown).message}`,
      'VEFAAS_FUNCTION_ROUTE must be the access address shown on the sandbox application page (scheme, host and path)',
      true,
    );
  }
  const verdict = classifyGatewayResponse(status, headers, body);
  switch (verdict.kind) {
    case 'auth':
      throw new CheckFailure(
        `the gateway refused the request (${verdict.reason})`,
        target.gatewayKey
          ? "VEFAAS_GATEWAY_KEY is wrong: copy the route's key again"
          : "the route wants a key: set VEFAAS_GATEWAY_KEY (the route's Key-Auth plugin)",
      );
    case 'transient':
      throw new CheckFailure(
        `the gateway answered ${verdict.reason}`,
        "the route's upstream is unhealthy: check the application is released (published) and its route points at it",
      );
    case 'dead':
      return `answers; a made-up instance is reported gone (${verdict.reason.split(':')[0]})`;
    case 'upstream':
      return `answers (HTTP ${status}) for a made-up instance; the alive check proves it reaches a sandbox`;
  }
}

async function waitUntilReady(
  target: VefaasTarget,
  sandboxId: string,
  timeoutMs: number,
  fixes: FixContext,
  elapsed: () => number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let pause = 100;
  for (;;) {
    const described = await target.vefaas
      .describeSandbox({ FunctionId: target.functionId, SandboxId: sandboxId })
      .catch((thrown: unknown) => {
        const err = coerceError(thrown);
        // Right after CreateSandbox some clients see ResourceNotFound for a moment (vefaas-api.md §6): keep asking.
        if (err.code === 'VEFAAS_NOT_FOUND') return undefined;
        throw err;
      });
    if (described?.Status === 'Ready') return `${sandboxId} Ready after ${seconds(elapsed())}`;
    if (described?.Status === 'Failed') {
      throw new CheckFailure(
        `${sandboxId} Failed: ${described.ErrorCode ?? 'no error code'}${described.ErrorMessage ? ` — ${described.ErrorMessage.slice(0, 300)}` : ''}`,
        failedSandboxFix(described.ErrorCode, fixes),
      );
    }
    if (Date.now() > deadline) {
      throw new CheckFailure(
        `${sandboxId} still ${described?.Status ?? 'unknown'} after ${seconds(timeoutMs)}`,
        'the cold start is slower than --startup-timeout-s: raise it, or use a smaller image',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(2 * SECOND_MS, pause * 1.5);
  }
}

/** /is_alive through the route; a Ready sandbox the route keeps calling "gone" is behind another route. */
async function waitUntilReachable(
  o: { target: VefaasTarget; sandboxId: string; authToken: string; timeoutMs: number; mismatchAfterMs: number },
  fixes: FixContext,
): Promise<void> {
  const { target, sandboxId } = o;
  const swerex = new SwerexClient({
    baseUrl: target.gatewayUrl,
    instanceName: sandboxId,
    apiKey: o.authToken,
    ...(target.gatewayKey ? { gatewayKey: target.gatewayKey } : {}),
  });
  let goneSince: number | undefined;
  await swerex.waitUntilAlive({
    timeoutMs: o.timeoutMs,
    onDead: async (error: RolloutError) => {
      goneSince ??= Date.now();
      if (Date.now() - goneSince > o.mismatchAfterMs) {
        throw new CheckFailure(
          `the route says ${sandboxId} does not exist (${error.message.slice(0, 200)}) while the control plane has it Ready`,
          routeDoesNotReachFix(fixes),
        );
      }
    },
  });
}

async function killAndConfirm(target: VefaasTarget, sandboxId: string, env: AgentEnv | undefined): Promise<string> {
  try {
    if (env) await env.close();
    else await target.vefaas.killSandbox({ FunctionId: target.functionId, SandboxId: sandboxId });
    const after = await target.vefaas
      .describeSandbox({ FunctionId: target.functionId, SandboxId: sandboxId })
      .catch((thrown: unknown) => {
        if (coerceError(thrown).code === 'VEFAAS_NOT_FOUND') return undefined;
        throw thrown;
      });
    if (after !== undefined && after.Status !== 'Terminating')
      throw new Error(`${sandboxId} is still ${after.Status} after KillSandbox`);
    return `${sandboxId} ${after === undefined ? 'gone' : 'Terminating'}`;
  } catch (thrown) {
    throw new CheckFailure(
      coerceError(thrown).message,
      `kill ${sandboxId} in the console: until then it runs (and costs) up to its 5-minute lifetime`,
    );
  }
}
