/**
 * `rollout-fleet submit <files...> --run <id>`: validate every input first, enqueue nothing unless all of
 * it is valid, then enqueue idempotently (what a previous submission of the run already holds is skipped).
 */
import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { EXIT } from '../exit-codes.js';
import { positiveInteger } from '../runtime/option-parsers.js';
import { progressLine } from '../runtime/progress.js';

interface SubmitFlags {
  run: string;
  samples: number;
  image?: string;
  imageTemplate?: string;
  predictions?: string[];
  instance?: string;
  gold: boolean;
  testCommand?: string;
  format?:
    'native' | 'swe-agent-traj' | 'mini-swe-agent' | 'openai-messages' | 'swebench-dataset' | 'swebench-predictions';
  repoDir?: string;
  replay: boolean;
  force: boolean;
  resume: boolean;
  dryRun: boolean;
  announce: boolean;
  announceTtl: number;
  chunkSize: number;
  policy?: string;
}

export function registerSubmit(program: Command): void {
  program
    .command('submit')
    .description(
      'Validate episode files and enqueue them as one run (idempotent: re-submitting enqueues only what is missing).',
    )
    .argument(
      '<files...>',
      'native JSON/JSONL episodes, SWE-agent .traj/.yaml, OpenAI tool-call messages, SWE-bench datasets',
    )
    .requiredOption('--run <id>', 'run id (job id = run + episode + sample)')
    .option(
      '--samples <n>',
      'rollouts per episode (an RL group); with --policy, N policy episodes per dataset instance',
      positiveInteger,
      1,
    )
    .option(
      '--policy <file>',
      'policy block (JSON or YAML) for every episode: the model at its endpoint chooses each action; a SWE-bench dataset becomes one policy episode per instance (see docs/policy.md)',
    )
    .option('--image <image>', 'sandbox image for records that name none')
    .option(
      '--image-template <template>',
      'image per instance, e.g. swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
    )
    .option(
      '--predictions <files...>',
      'SWE-bench predictions (preds.json / .jsonl) to grade against the dataset files',
    )
    .option('--instance <id>', 'instance id for a single-episode file (.traj) whose name does not give it')
    .option('--gold', 'also grade every dataset instance with its gold patch', false)
    .option('--test-command <cmd>', 'test command for dataset instances (default: per repository, as SWE-bench)')
    .addOption(
      new Option('--format <format>', 'read every file as this format').choices([
        'native',
        'swe-agent-traj',
        'mini-swe-agent',
        'openai-messages',
        'swebench-dataset',
        'swebench-predictions',
      ]),
    )
    .option(
      '--repo-dir <path>',
      'where the repository sits in the sandbox, over what trajectories say (default: inferred, else /testbed)',
    )
    .option('--no-replay', 'for agent trajectories: grade the recorded submission instead of replaying the actions')
    .option('--force', 're-run episodes that already have a result', false)
    .option(
      '--resume',
      'submit into a cancelled run: resume it (its cancelled episodes run again, finished ones are kept)',
      false,
    )
    .option('--dry-run', 'validate only; enqueue nothing', false)
    .option(
      '--announce',
      "validate and announce the run's sandboxes for warm pools; enqueue nothing (submit it later, without --announce)",
      false,
    )
    .option('--announce-ttl <s>', 'seconds an announcement stays if the run is never submitted', positiveInteger, 3600)
    .option('--chunk-size <n>', 'episodes per enqueue round trip', positiveInteger, 500)
    .addHelpText(
      'after',
      '\nAn RL trainer knows its next batch while it trains on this one: `submit next.jsonl --run batch-8 --announce`\n' +
        "lets the workers' warm pools (RF_WARM_POOL_MAX) get those images ready; `submit next.jsonl --run batch-8`\n" +
        'later enqueues them (and retires the announcement). When no live worker keeps a warm pool (none running, or\n' +
        'all with RF_WARM_POOL_MAX=0) it still announces, warns on stderr that nothing will be pre-warmed, and exits 0.\n' +
        '\nCtrl-C while enqueueing stops after the current chunk and says how many were enqueued; the same submit again\n' +
        'enqueues the rest (`status` shows "enqueued N of M" meanwhile).\n' +
        '\nExit codes: 0 enqueued / announced (or nothing missing), 3 invalid input or a cancelled run without --resume\n' +
        '(nothing enqueued), 4 Redis unreachable, 130 interrupted (Ctrl-C).',
    )
    .action(async (files: string[], flags: SubmitFlags) => {
      process.exitCode = await runSubmit(files, flags);
    });
}

async function runSubmit(paths: string[], flags: SubmitFlags): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  // Ctrl-C while files are read and validated: nothing is in Redis yet, and saying so is all there is to do.
  const beforeEnqueue = (): void => {
    console.error('submit: interrupted before anything was enqueued');
    process.exit(EXIT.INTERRUPTED);
  };
  process.on('SIGINT', beforeEnqueue);
  try {
    const { config, logger } = loadContext();
    const { decodeInputFile, validateInputs, formatLocation, formatProblem, samplingWarnings, submitRun } =
      await import('@rollout-fleet/producer');
    const all = [...paths, ...(flags.predictions ?? []), ...(flags.policy ? [flags.policy] : [])];
    const decodedFiles: Array<{ path: string; text: string } | undefined> = [];
    const undecodable = [];
    for (const path of all) {
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (err) {
        console.error(`submit: cannot read ${path}: ${(err as Error).message}; nothing was enqueued`);
        return EXIT.INVALID_INPUT;
      }
      const decoded = decodeInputFile(path, bytes);
      decodedFiles.push(decoded.ok ? decoded.file : undefined);
      if (!decoded.ok) undecodable.push(decoded.problem);
    }
    const image = flags.image ?? config.sandbox.image;
    // The policy file (last of `all`) is not an input of episodes.
    const policyFile = flags.policy ? decodedFiles.pop() : undefined;
    const files = decodedFiles.filter((file) => file !== undefined);
    const validated = validateInputs(files, {
      ...(policyFile ? { policyFile } : {}),
      runId: flags.run,
      samples: flags.samples,
      gold: flags.gold,
      ...(image ? { image } : {}),
      ...(flags.imageTemplate ? { imageTemplate: flags.imageTemplate } : {}),
      ...(flags.instance ? { instanceId: flags.instance } : {}),
      ...(flags.testCommand ? { testCommand: flags.testCommand } : {}),
      ...(flags.format ? { format: flags.format } : {}),
      ...(flags.repoDir ? { repoDir: flags.repoDir } : {}),
      ...(flags.replay ? {} : { replay: false }),
    });
    for (const warning of validated.warnings) console.error(`submit: warning: ${formatProblem(warning)}`);
    const problems = [...undecodable, ...validated.problems];
    if (problems.length > 0) {
      for (const problem of problems) console.error(formatProblem(problem));
      console.error(`submit: ${problems.length} problem(s) in ${all.length} file(s); nothing was enqueued`);
      return EXIT.INVALID_INPUT;
    }
    for (const warning of samplingWarnings(validated.episodes)) console.error(`submit: warning: ${warning}`);
    const { checkImages } = await import('./submit-images.js');
    const images = await checkImages(config, validated.episodes, validated.locations);
    if (images.missing.length > 0) {
      for (const m of images.missing) {
        const at = m.firstAt === undefined ? '' : `${formatLocation(m.firstAt)}: `;
        const guess = m.suggestion === undefined ? '' : `; did you mean "${m.suggestion}"?`;
        console.error(
          `${at}sandbox.image: image "${m.image}" does not exist (${m.episodes} episode(s) use it)${guess}`,
        );
      }
      console.error(
        `submit: ${images.missing.length} sandbox image(s) not found by vefaas-local in ${images.where} ` +
          `(${images.missing.map((m) => `"${m.image}"`).join(', ')}); fix the image names or VEFAAS_LOCAL_IMAGES_DIR; nothing was enqueued`,
      );
      return EXIT.INVALID_INPUT;
    }
    if (flags.dryRun) {
      console.log(`submit: ${validated.episodes.length} episode(s) valid; dry run, nothing enqueued`);
      return EXIT.OK;
    }
    const { openQueue } = await import('../runtime/redis.js');
    const q = await openQueue(config);
    try {
      if (flags.announce) {
        const { announceDemand, announcementWarning, readWarmPoolCapacity } = await import('@rollout-fleet/shared');
        const announced = await announceDemand({
          redis: q.redis,
          keys: q.keys,
          runId: flags.run,
          episodes: validated.episodes,
          ttlS: flags.announceTtl,
        });
        console.log(
          `run ${flags.run}: announced ${announced.sandboxes} sandbox(es) of ${announced.specs} kind(s) for warm pools; nothing enqueued`,
        );
        // The announcement stands (a worker started later still fills for it), so this is a warning with exit 0.
        const warning = announcementWarning(await readWarmPoolCapacity({ redis: q.redis, keys: q.keys }));
        if (warning !== undefined) console.error(`submit: warning: ${warning}`);
        return EXIT.OK;
      }
      process.off('SIGINT', beforeEnqueue);
      const progress = progressLine('enqueue');
      // Ctrl-C stops between two chunks, so what is in Redis is whole and the run says how far it got; a second
      // Ctrl-C does not wait for the chunk.
      const interrupt = new AbortController();
      const onSigint = (): void => {
        if (interrupt.signal.aborted) {
          progress.done();
          console.error(
            `submit: interrupted again; stopping now. Run the same submit again to enqueue what is missing.`,
          );
          process.exit(EXIT.INTERRUPTED);
        }
        interrupt.abort();
      };
      process.on('SIGINT', onSigint);
      let summary;
      try {
        summary = await submitRun({
          queue: q.queue,
          redis: q.redis,
          keys: q.keys,
          runId: flags.run,
          episodes: validated.episodes,
          datasetInstanceIds: validated.datasetInstanceIds,
          force: flags.force,
          resume: flags.resume,
          chunkSize: flags.chunkSize,
          signal: interrupt.signal,
          policy: {
            attempts: config.worker.attempts,
            backoffMs: config.worker.backoffMs,
            retentionS: config.worker.resultRetentionDays * 86_400,
          },
          onProgress: (p) => progress.update(p.done, p.total, `enqueued ${p.enqueued} skipped ${p.skipped}`),
        });
      } finally {
        process.off('SIGINT', onSigint);
        progress.done();
      }
      logger.debug({ summary }, 'submitted');
      const n = (value: number): string => value.toLocaleString('en-US');
      if (summary.cancelled) {
        console.error(
          `submit: run ${summary.runId} was cancelled while this submit was enqueueing; stopped with ${n(summary.run.enqueued)} of ${n(summary.run.total)} ` +
            `episode(s) enqueued (they end cancelled). To run it after all: submit again with --resume`,
        );
        return EXIT.FAILURE;
      }
      if (summary.interrupted) {
        console.error(
          `submit: interrupted: run ${summary.runId} has ${n(summary.run.enqueued)} of ${n(summary.run.total)} episode(s) enqueued ` +
            `(${n(summary.enqueued)} by this submit); run the same submit again to enqueue the rest (only what is missing is enqueued)`,
        );
        return EXIT.INTERRUPTED;
      }
      console.log(
        `run ${summary.runId}: ${summary.total} episode(s), ${summary.enqueued} enqueued, ` +
          `${summary.skippedDone} already done, ${summary.skippedQueued} already queued` +
          (summary.resumed > 0 ? ` (resumed: ${summary.resumed} cancelled episode(s) run again)` : ''),
      );
      return EXIT.OK;
    } finally {
      await q.close();
    }
  } catch (err) {
    return reportFailure('submit', err);
  } finally {
    process.off('SIGINT', beforeEnqueue);
  }
}
