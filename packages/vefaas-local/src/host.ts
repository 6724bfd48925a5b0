/**
 * vefaas-local host: one HTTP server carrying the control plane, the gateway route and the local extras.
 *   POST /?Action=<Name>&Version=2024-06-06   control plane (control-plane/control-plane.ts)
 *   <prefix>/...                              gateway route, default prefix /fn/<functionId> (gateway/gateway.ts)
 *   GET /healthz                              {ok, functionId, isolation, limits (what sandboxes are bounded by here; null when
 *                                             emulated), sandboxes:{total, Starting, Ready, Failed, Terminating}, liveInstances}
 *   /_admin/...                               fault injection and instance death (faults/admin.ts), behind exposure.ts
 * Beyond loopback it refuses to start unless signatures are verified and a gateway key is set (exposure.ts).
 * `close()` (and the CLI on SIGINT/SIGTERM) kills every sandbox before resolving.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RolloutError, createLogger, type Logger } from '@rollout-fleet/shared';
import { verifySignature } from '@rollout-fleet/sandbox';
import type { SandboxBackend } from './backends/backend.js';
import { EmulatedBackend } from './backends/emulated-backend.js';
import { ProcessBackend } from './backends/process-backend.js';
import { loadSandboxRuntime } from './backends/sandbox-runtime.js';
import type { ControlPlaneSettings } from './control-plane/action-context.js';
import { createControlPlane } from './control-plane/control-plane.js';
import type { SignatureVerifier } from './control-plane/signature.js';
import { guardAdmin, exposureProblem } from './exposure.js';
import { ADMIN_PREFIX, createAdmin } from './faults/admin.js';
import { FaultController } from './faults/fault-controller.js';
import { createGateway, defaultDeadInstance, type GatewaySettings } from './gateway/gateway.js';
import type { Isolation, VefaasLocalOptions } from './host-options.js';
import { sendJson } from './http-util.js';
import { SandboxManager } from './registry/sandbox-manager.js';
import type { CgroupOptions } from './sandbox/cgroups/sandbox-cgroups.js';
import { removeSandboxLeftovers } from './sandbox/leftovers.js';
import { describeUnenforced, type LimitsReport } from './sandbox/limits-report.js';
import type { SandboxStatus } from './registry/sandbox-record.js';

const SECOND = 1000;

export interface VefaasLocalHandle {
  /** Control-plane endpoint (VEFAAS_ENDPOINT), e.g. http://127.0.0.1:41234 */
  controlPlaneUrl: string;
  /** Gateway route including the prefix (VEFAAS_FUNCTION_ROUTE), e.g. http://127.0.0.1:41234/fn/fn-abc */
  gatewayUrl: string;
  functionId: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** True when the credentials were generated here (the CLI prints the secret once in that case). */
  credentialsGenerated: boolean;
  isolation: Isolation;
  /** What sandboxes are bounded by on this machine (null when emulated); also in /healthz. */
  limits: LimitsReport | null;
  faults: FaultController;
  /** Sandboxes whose instance may still be running. */
  liveSandboxes(): number;
  /** Sandboxes by status, as /healthz reports them. */
  sandboxCounts(): Record<SandboxStatus, number> & { total: number };
  /** Sandboxes created so far and sandbox-seconds used (create → gone; live ones up to now), as a bill counts. */
  usage(): { created: number; sandboxSeconds: number };
  /** Host pids of running sandbox instances (real isolation only). */
  sandboxPids(): number[];
  /** Stops accepting requests, kills every sandbox, waits for them to be gone. */
  close(): Promise<void>;
}

export async function startVefaasLocal(options: VefaasLocalOptions = {}): Promise<VefaasLocalHandle> {
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const isolation = options.isolation ?? 'bwrap';
  const bindHost = options.host ?? '127.0.0.1';
  // Checked before anything is created: a refused host leaves nothing behind.
  const refused = exposureProblem({
    host: bindHost,
    isolation,
    verifiesSignatures: options.verifier !== undefined || options.verifySignatures !== false,
    gatewayKey: options.gateway?.key ?? null,
  });
  if (refused !== undefined) throw new RolloutError('CONFIG_INVALID', `vefaas-local: ${refused}`);
  const functionId = options.functionId ?? `fn-${randomBytes(6).toString('hex')}`;
  const region = options.region ?? 'cn-beijing';
  const credentialsGenerated = options.credentials === undefined;
  const credentials = normaliseCredentials(options.credentials);
  const primary = credentials[0] ?? { accessKeyId: '', secretAccessKey: '' };
  const prefix = normalisePrefix(options.gateway?.prefix ?? `/fn/${functionId}`);
  const requestTimeoutMs = options.gateway?.requestTimeoutMs ?? 650 * SECOND;

  const ownsStateRoot = options.stateRoot === undefined && isolation !== 'emulated';
  const stateRoot =
    options.stateRoot ?? (isolation === 'emulated' ? '' : await mkdtemp(join(tmpdir(), 'vefaas-local-')));
  // A given state dir may hold what a crashed host left (state dirs, empty cgroups); no sandbox of a
  // previous host is alive (they die with it), so everything there is debris.
  if (!ownsStateRoot && stateRoot !== '') await sweepLeftovers(stateRoot, options.cgroup, logger);
  const { backend, limits } = await createBackend({ options, isolation, stateRoot, requestTimeoutMs, logger });

  const faults = new FaultController(options.faults ?? {});
  const manager = new SandboxManager({
    functionId,
    backend,
    faults,
    logger,
    coldStartTimeoutMs: options.coldStartTimeoutMs ?? 120 * SECOND,
    onInstanceDeath: options.onInstanceDeath ?? 'failed',
  });
  const settings: ControlPlaneSettings = {
    functionId,
    createReturns: options.createReturns ?? 'started',
    rejectStatusFilter: options.rejectStatusFilter ?? true,
    minLifetimeMs: (options.minLifetimeSeconds ?? 1) * SECOND,
    functionDefaults: { image: '', command: '', port: 8000, ...options.functionDefaults },
  };
  const verifier = chooseVerifier(options, credentials, logger);
  const handleControlPlane = createControlPlane({ context: { manager, faults, settings }, verifier, region, logger });
  const gatewaySettings: GatewaySettings = {
    prefix,
    key: options.gateway?.key ?? null,
    requestTimeoutMs,
    deadInstance: { ...defaultDeadInstance, ...options.gateway?.deadInstance },
  };
  const handleGateway = createGateway({ settings: gatewaySettings, manager, faults, logger });
  const handleAdmin = guardAdmin(createAdmin({ faults, manager }), {
    host: bindHost,
    adminKey: options.adminKey ?? null,
  });

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://vefaas-local');
    if (url.pathname === '/healthz' && req.method === 'GET') {
      return sendJson(res, 200, {
        ok: true,
        functionId,
        isolation,
        limits,
        sandboxes: manager.counts(),
        liveInstances: manager.liveInstances(),
      });
    }
    if (url.pathname.startsWith(ADMIN_PREFIX)) return handleAdmin(req, res, url);
    const isControlPlane =
      url.pathname === '/' && (url.searchParams.has('Action') || (req.method === 'POST' && prefix !== ''));
    if (isControlPlane) return handleControlPlane(req, res, url);
    if (prefix === '' || url.pathname === prefix || url.pathname.startsWith(`${prefix}/`))
      return handleGateway(req, res, url);
    return sendJson(res, 404, { error: { code: 'NotFound', message: `no route for ${url.pathname}` } });
  };

  const server = createServer({ keepAliveTimeout: 65 * SECOND, requestTimeout: 0 }, (req, res) => {
    route(req, res).catch((err: unknown) => {
      logger.error({ err }, 'unhandled request failure');
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'InternalError', message: 'internal error' } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bindHost, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${hostForUrl}:${address.port}`;

  const sandboxPids = (): number[] =>
    manager.list().flatMap((record) => (record.instance?.pid != null ? [record.instance.pid] : []));
  const killOnExit = (): void => {
    for (const pid of sandboxPids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  if (options.killOnExit !== false) process.on('exit', killOnExit);

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await manager.close();
      await stopped;
      process.off('exit', killOnExit);
      if (ownsStateRoot) await rm(stateRoot, { recursive: true, force: true });
      logger.info('vefaas-local stopped');
    })();
    return closing;
  };

  logger.info({ controlPlaneUrl: base, gatewayUrl: base + prefix, functionId, isolation }, 'vefaas-local listening');
  return {
    controlPlaneUrl: base,
    gatewayUrl: base + prefix,
    functionId,
    region,
    accessKeyId: primary.accessKeyId,
    secretAccessKey: primary.secretAccessKey,
    credentialsGenerated,
    isolation,
    limits,
    faults,
    liveSandboxes: () => manager.liveInstances(),
    sandboxCounts: () => manager.counts(),
    usage: () => manager.usage(),
    sandboxPids,
    close,
  };
}

function normaliseCredentials(
  input: VefaasLocalOptions['credentials'],
): Array<{ accessKeyId: string; secretAccessKey: string }> {
  if (input === undefined) {
    return [
      { accessKeyId: `AKLT${randomBytes(12).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') },
    ];
  }
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) throw new Error('vefaas-local: credentials must contain at least one AK/SK pair');
  return list;
}

function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) return `/${trimmed}`;
  return trimmed;
}

function chooseVerifier(
  options: VefaasLocalOptions,
  credentials: Array<{ accessKeyId: string; secretAccessKey: string }>,
  logger: Logger,
): SignatureVerifier | null {
  if (options.verifier) return options.verifier;
  if (options.verifySignatures === false) {
    logger.warn('signature verification is OFF: any caller can drive this control plane');
    return null;
  }
  const secrets = new Map(credentials.map((c) => [c.accessKeyId, c.secretAccessKey]));
  return (request) =>
    verifySignature(request, {
      lookupSecret: (ak) => secrets.get(ak),
      ...(options.maxSkewMs === undefined ? {} : { maxSkewMs: options.maxSkewMs }),
    });
}

async function createBackend(input: {
  options: VefaasLocalOptions;
  isolation: Isolation;
  stateRoot: string;
  requestTimeoutMs: number;
  logger: Logger;
}): Promise<{ backend: SandboxBackend; limits: LimitsReport | null }> {
  const { options, isolation, logger } = input;
  const runtime = await loadSandboxRuntime();
  if (isolation === 'emulated') {
    const backend = new EmulatedBackend({
      parseAuthToken: runtime.parseAuthToken,
      ...(options.emulatedImages === undefined ? {} : { knownImages: options.emulatedImages }),
    });
    // Emulated sandboxes run no processes: there is nothing to limit.
    return { backend, limits: null };
  }
  if (isolation === 'bwrap') {
    const check = await runtime.checkIsolation();
    if (!check.ok) {
      throw new RolloutError(
        'CONFIG_INVALID',
        `vefaas-local: bubblewrap isolation is not available (${check.reason}). ` +
          "Install bubblewrap (apt-get install bubblewrap), or pass isolation 'none' (--isolation none) to run sandboxes WITHOUT isolation.",
      );
    }
  } else {
    logger.warn('ISOLATION IS OFF: sandbox commands run as this user with full access to this machine');
  }
  const limits = await runtime.probeLimits({
    isolation,
    ...(options.cgroup === undefined ? {} : { cgroup: options.cgroup }),
  });
  if (limits.unenforced.length > 0) {
    logger.warn({ limits }, `sandbox limits NOT enforced on this machine: ${describeUnenforced(limits)}`);
  } else {
    logger.info(
      { limits },
      `sandbox limits enforced (cgroup ${limits.cgroup}: memory, processes, cpu; disk: sized tmpfs)`,
    );
  }
  const backend = new ProcessBackend({
    runtime,
    isolation,
    imagesDir: options.imagesDir ?? null,
    stateRoot: input.stateRoot,
    network: options.sandboxNetwork ?? false,
    requestTimeoutMs: input.requestTimeoutMs,
    ...(options.sandboxDiskMB === undefined ? {} : { diskMB: options.sandboxDiskMB }),
    ...(options.sandboxMaxProcesses === undefined ? {} : { maxProcesses: options.sandboxMaxProcesses }),
    ...(options.cgroup === undefined ? {} : { cgroup: options.cgroup }),
  });
  return { backend, limits };
}

async function sweepLeftovers(stateRoot: string, cgroup: CgroupOptions | undefined, logger: Logger): Promise<void> {
  const entries = await readdir(stateRoot, { withFileTypes: true }).catch(() => []);
  const stale = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  for (const sandboxId of stale)
    await removeSandboxLeftovers({ stateRoot, sandboxId, ...(cgroup === undefined ? {} : { cgroup }) });
  if (stale.length > 0) logger.warn({ stateRoot, removed: stale.length }, 'removed leftovers of a previous host');
}
