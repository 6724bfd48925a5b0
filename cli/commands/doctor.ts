/**
 * `rollout-fleet doctor`: the preflight before a first run on a veFaaS account (or any sandbox host): credentials,
 * clock, gateway route, then one sandbox start → alive → tools → command → kill. One line per check with its
 * timing and, on failure, what to fix (see cli/doctor/run-doctor.ts). Without VEFAAS_* cloud settings it checks
 * an embedded vefaas-local, as every other command would use.
 */
import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import type { CheckLine } from '../doctor/doctor-types.js';
import { positiveInteger } from '../runtime/option-parsers.js';

interface DoctorFlags {
  image?: string;
  command?: string;
  startupTimeoutS?: number;
}

const LABEL = { ok: 'ok    ', warn: 'warn  ', fail: 'FAILED', skip: 'skip  ' } as const;

export function formatCheckLine(line: CheckLine): string {
  const timing = line.status === 'skip' ? '     -' : `${(line.ms / 1000).toFixed(2)}s`.padStart(6);
  const fix = line.fix && line.status !== 'ok' ? ` — fix: ${line.fix}` : '';
  return `${LABEL[line.status]} ${line.name.padEnd(14)} ${timing}  ${line.detail}${fix}`;
}

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check a veFaaS setup end to end: credentials, clock, gateway route, one sandbox start → alive → tools → command → kill.',
    )
    .option('--image <image>', 'sandbox image to start (default RF_SANDBOX_IMAGE; embedded vefaas-local: "python")')
    .option('--command <template>', 'start command to test, with {auth_token} (default: the one workers use)')
    .option(
      '--startup-timeout-s <n>',
      'how long the sandbox may take to become Ready, and then alive (default RF_STARTUP_TIMEOUT_S)',
      positiveInteger,
    )
    .addHelpText(
      'after',
      '\nA sandbox it creates is killed at the end, whatever failed; it has a 5-minute lifetime as a backstop.' +
        '\nExit codes: 0 every check passed (warnings allowed), 1 a check failed, 3 invalid configuration, 4 the control plane or route was unreachable.',
    )
    .action(async (flags: DoctorFlags) => {
      process.exitCode = await runDoctorCommand(flags);
    });
}

async function runDoctorCommand(flags: DoctorFlags): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  let closeTarget: (() => Promise<void>) | undefined;
  try {
    const { config, logger } = loadContext();
    const cloud = config.vefaas.mode === 'cloud';
    const image = flags.image ?? config.sandbox.image ?? (cloud ? undefined : 'python');
    if (!image) {
      console.error('doctor: no image to start: pass --image or set RF_SANDBOX_IMAGE');
      return EXIT.INVALID_INPUT;
    }
    const { closeSharedDispatchers } = await import('@rollout-fleet/sandbox');
    const { openTarget } = await import('../runtime/target.js');
    // Quiet: the lines below say what happened; the embedded host's own logs would interleave.
    const opened = await openTarget(config, logger.child({}, { level: 'error' }));
    closeTarget = async () => {
      await opened.close();
      await closeSharedDispatchers();
    };
    const endpoint = cloud ? config.vefaas.endpoint : new URL(opened.target.gatewayUrl).origin;
    console.log(`doctor: ${opened.description}; route ${opened.target.gatewayUrl}; image ${image}`);
    if (!cloud) console.log(`doctor: ${await describeLocalImage(config, image)}`);
    const { runDoctor } = await import('../doctor/run-doctor.js');
    const started = performance.now();
    const report = await runDoctor({
      target: opened.target,
      endpoint,
      region: config.vefaas.region,
      image,
      ...(flags.command ? { command: flags.command } : {}),
      startupTimeoutS: flags.startupTimeoutS ?? config.sandbox.startupTimeoutS,
      onLine: (line) => console.log(formatCheckLine(line)),
    });
    const failed = report.lines.filter((l) => l.status === 'fail').map((l) => l.name);
    const took = `${((performance.now() - started) / 1000).toFixed(1)}s`;
    console.log(
      failed.length === 0
        ? `doctor: all checks passed in ${took}`
        : `doctor: ${failed.length} check(s) failed (${failed.join(', ')}) in ${took}`,
    );
    if (report.ok) return EXIT.OK;
    return report.unreachable ? EXIT.UNAVAILABLE : EXIT.FAILURE;
  } catch (err) {
    return reportFailure('doctor', err);
  } finally {
    await closeTarget?.();
  }
}

/** Which kind of local image the embedded host will start: an imported container image, or a directory. */
async function describeLocalImage(config: { vefaas: { mode: string; imagesDir?: string | undefined } }, image: string) {
  const { EXAMPLE_IMAGES_DIR } = await import('../runtime/target.js');
  const { readImportedImage, resolveImage } = await import('@rollout-fleet/vefaas-local');
  const imagesDir = config.vefaas.imagesDir ?? EXAMPLE_IMAGES_DIR;
  let dir: string;
  try {
    dir = resolveImage(image, imagesDir);
  } catch (err) {
    return `image ${image}: ${(err as Error).message}`;
  }
  const imported = readImportedImage(dir);
  if (imported === null) return `image ${image}: directory image ${dir} (its files at /testbed, the host's /usr)`;
  return `image ${image}: imported container image ${imported.digest} (${(imported.bytes / 1e6).toFixed(0)} MB, from ${imported.source}; its own root file system)`;
}
