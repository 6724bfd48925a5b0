/**
 * `rollout-fleet sandbox-host`: runs vefaas-local (control plane + gateway + sandboxes) until SIGINT/SIGTERM,
 * then kills every sandbox and exits 0. Prints the endpoint, function id and route on stdout; logs go to stderr.
 * The secret key is printed only when it was generated here (once), never when it was given.
 * Beyond loopback it refuses to start (exit 3) unless signatures are verified and a gateway key is set, and
 * never with --isolation none; /_admin then needs --admin-key. It says at start-up which sandbox limits
 * (memory, processes, cpu, disk) this machine cannot enforce.
 */
import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { EXIT } from '../exit-codes.js';
import { nonNegativeInteger, portNumber, positiveInteger } from '../runtime/option-parsers.js';

interface SandboxHostFlags {
  port: number;
  host: string;
  images?: string;
  stateDir?: string;
  isolation: 'bwrap' | 'none' | 'emulated';
  functionId?: string;
  accessKey?: string;
  secretKey?: string;
  verifySignatures: boolean;
  gatewayKey?: string;
  adminKey?: string;
  gatewayPrefix?: string;
  sandboxDiskMb?: number;
  cgroupParent?: string;
  faults?: string;
  seed?: number;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

export function registerSandboxHost(program: Command): void {
  program
    .command('sandbox-host')
    .description('Run a local veFaaS (signed control plane, gateway route, SWE-ReX sandboxes) until interrupted.')
    .option('--port <n>', 'port of the control plane and gateway (0 = any free port)', portNumber, 8780)
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .option(
      '--images <dir>',
      'directory of sandbox images: directories of repository files, and docker save archives (NAME.tar) or OCI layouts imported at start',
    )
    .option('--state-dir <dir>', 'where per-sandbox state lives (default: a temp dir, removed on exit)')
    .addOption(
      new Option('--isolation <mode>', 'how sandboxes run').choices(['bwrap', 'none', 'emulated']).default('bwrap'),
    )
    .option('--function-id <id>', 'the sandbox application id to serve (default: generated)')
    .option('--access-key <ak>', 'accepted access key id (default: generated and printed)')
    .option('--secret-key <sk>', 'secret key of --access-key (default: generated and printed once)')
    .option('--no-verify-signatures', 'accept unsigned control-plane requests (local experiments only)')
    .option('--gateway-key <key>', 'require this key on the gateway route (Authorization header or query)')
    .option(
      '--admin-key <key>',
      'require this key on /_admin (Authorization: Bearer); without it /_admin is closed beyond loopback',
    )
    .option('--gateway-prefix <path>', 'route prefix of the gateway (default: /fn/<function id>)')
    .option('--faults <file>', 'JSON fault-injection config (see the README)')
    .option('--seed <n>', 'seed of the fault dice (overrides the file)', nonNegativeInteger)
    .option(
      '--sandbox-disk-mb <n>',
      'size of each writable directory of a sandbox (/testbed, /tmp, /root tmpfs)',
      positiveInteger,
    )
    .option('--cgroup-parent <dir>', 'cgroup v2: a delegated directory to create sandbox groups in (default: found)')
    .addHelpText(
      'after',
      '\nBeyond loopback (--host 0.0.0.0, a LAN address) it starts only with signature verification and --gateway-key,\nnever with --isolation none. Exit codes: 0 stopped cleanly, 2 usage, 3 refused configuration, 4 could not start.',
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
        .default('info'),
    )
    .action(async (flags: SandboxHostFlags) => {
      process.exitCode = await runSandboxHost(flags);
    });
}

async function runSandboxHost(flags: SandboxHostFlags): Promise<number> {
  if ((flags.accessKey === undefined) !== (flags.secretKey === undefined)) {
    console.error('sandbox-host: give both --access-key and --secret-key, or neither');
    return EXIT.USAGE;
  }
  const { createLogger, RolloutError } = await import('@rollout-fleet/shared');
  const { startVefaasLocal, parseFaultConfig } = await import('@rollout-fleet/vefaas-local');
  const logger = createLogger({
    level: flags.logLevel,
    destination: process.stderr,
    secrets: [flags.secretKey, flags.gatewayKey, flags.adminKey],
    name: 'sandbox-host',
  });

  let faults;
  try {
    const fromFile: unknown = flags.faults === undefined ? {} : JSON.parse(await readFile(flags.faults, 'utf8'));
    faults = parseFaultConfig(flags.seed === undefined ? fromFile : { ...(fromFile as object), seed: flags.seed });
  } catch (err) {
    console.error(`sandbox-host: ${flags.faults ?? 'faults'}: ${(err as Error).message}`);
    return EXIT.INVALID_INPUT;
  }

  // docker save archives and OCI layouts in --images are imported before the first sandbox needs them.
  if (flags.images !== undefined) {
    const imported = await importPendingImages(flags.images);
    if (imported !== EXIT.OK) return imported;
  }

  let host;
  try {
    host = await startVefaasLocal({
      port: flags.port,
      host: flags.host,
      isolation: flags.isolation,
      logger,
      faults,
      verifySignatures: flags.verifySignatures,
      ...(flags.adminKey === undefined ? {} : { adminKey: flags.adminKey }),
      ...(flags.sandboxDiskMb === undefined ? {} : { sandboxDiskMB: flags.sandboxDiskMb }),
      ...(flags.cgroupParent === undefined ? {} : { cgroup: { parent: flags.cgroupParent } }),
      ...(flags.images === undefined ? {} : { imagesDir: flags.images }),
      ...(flags.stateDir === undefined ? {} : { stateRoot: flags.stateDir }),
      ...(flags.functionId === undefined ? {} : { functionId: flags.functionId }),
      ...(flags.accessKey === undefined || flags.secretKey === undefined
        ? {}
        : { credentials: { accessKeyId: flags.accessKey, secretAccessKey: flags.secretKey } }),
      gateway: {
        ...(flags.gatewayKey === undefined ? {} : { key: flags.gatewayKey }),
        ...(flags.gatewayPrefix === undefined ? {} : { prefix: flags.gatewayPrefix }),
      },
    });
  } catch (err) {
    console.error(`sandbox-host: ${(err as Error).message}`);
    return err instanceof RolloutError && err.code === 'CONFIG_INVALID' ? EXIT.INVALID_INPUT : EXIT.UNAVAILABLE;
  }

  // Listen before printing: whoever reads the banner may signal us at once.
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    // Handlers stay installed: a second Ctrl-C must not kill us before every sandbox is dead.
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return void logger.warn({ signal }, 'already stopping; waiting for sandboxes to die');
      stopping = true;
      logger.info({ signal, sandboxes: host.sandboxCounts().total }, 'stopping: killing every sandbox');
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const lines = [
    `vefaas-local is running (isolation: ${host.isolation})`,
    `  VEFAAS_ENDPOINT=${host.controlPlaneUrl}`,
    `  VEFAAS_REGION=${host.region}`,
    `  VEFAAS_FUNCTION_ID=${host.functionId}`,
    `  VEFAAS_FUNCTION_ROUTE=${host.gatewayUrl}`,
    `  VEFAAS_ACCESS_KEY=${host.accessKeyId}`,
  ];
  if (host.credentialsGenerated) {
    lines.push(`  VEFAAS_SECRET_KEY=${host.secretAccessKey}    <- generated for this run; shown only once`);
  }
  if (!flags.verifySignatures) lines.push('  (signature verification is OFF)');
  if (host.limits !== null) {
    const { enforced, unenforced } = host.limits;
    lines.push(
      `  sandbox limits: memory ${enforced.memory}, processes ${enforced.processes}, cpu ${enforced.cpu}, disk ${enforced.disk}`,
    );
    for (const u of unenforced) lines.push(`  NOT ENFORCED: ${u.limit} (${u.why})`);
  }
  lines.push(`  health: ${host.controlPlaneUrl}/healthz   faults: ${host.controlPlaneUrl}/_admin/faults`);
  console.log(lines.join('\n'));

  await stopped;
  await host.close();
  return EXIT.OK;
}

async function importPendingImages(imagesDir: string): Promise<number> {
  const { ImageImportError, importImage, pendingImports } = await import('@rollout-fleet/vefaas-local');
  for (const source of await pendingImports(imagesDir)) {
    console.error(`sandbox-host: importing ${source.path} as ${source.name} (once; see rollout-fleet images import)`);
    try {
      const result = await importImage({
        source: source.path,
        name: source.name,
        imagesDir,
        onProgress: (p) =>
          console.error(
            `sandbox-host: ${p.phase === 'copy' ? 'copying' : 'unpacking'} ${source.name}: ${(p.bytes / 1e6).toFixed(0)} MB (${(p.elapsedMs / 1000).toFixed(0)} s)`,
          ),
      });
      console.error(`sandbox-host: imported ${source.name} (${result.image.digest})`);
    } catch (err) {
      console.error(`sandbox-host: cannot import ${source.path}: ${(err as Error).message}`);
      return err instanceof ImageImportError && err.reason === 'tool-missing' ? EXIT.UNAVAILABLE : EXIT.INVALID_INPUT;
    }
  }
  return EXIT.OK;
}
