/**
 * `rollout-fleet results --run <id>`: results in completion order, as JSONL or as SWE-bench report.json;
 * `--groups`: completed RL groups instead (one group-completed event per line, each group once).
 * `--follow` keeps streaming until the run is done; `--after` / `--checkpoint` resume where a previous
 * read stopped (stream ids are the cursor; results and groups have separate cursors).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Command, Option } from 'commander';
import type { EpisodeResult, SwebenchTree } from '@rollout-fleet/shared';
import { EXIT } from '../exit-codes.js';

interface ResultsFlags {
  run: string;
  format: 'jsonl' | 'swebench' | 'openai' | 'training' | 'fidelity';
  integrity?: 'suspect' | 'violated';
  follow: boolean;
  after?: string;
  checkpoint?: string;
  summary?: string;
  out?: string;
  groups: boolean;
}

export function registerResults(program: Command): void {
  program
    .command('results')
    .description(
      "Stream a run's results as they complete (JSONL, SWE-bench report.json, or training data of policy episodes).",
    )
    .requiredOption('--run <id>', 'run id')
    .addOption(
      new Option(
        '--format <format>',
        "jsonl: one result per line; swebench: report.json; openai: each policy episode's conversation as OpenAI messages + tools (SFT data, re-submittable as a replay); training: one record per model turn with prompt/completion token ids, logprobs and the episode reward; fidelity: a table of replayed vs recorded observations per episode",
      )
        .choices(['jsonl', 'swebench', 'openai', 'training', 'fidelity'])
        .default('jsonl'),
    )
    .addOption(
      new Option(
        '--integrity <level>',
        'only results whose integrity flag is at least this: suspect (suspect or violated) or violated (docs/adversarial-grading.md)',
      ).choices(['suspect', 'violated']),
    )
    .option('--follow', 'keep streaming new results until every episode of the run is done', false)
    .option('--after <cursor>', 'resume after this cursor (a stream id printed by an earlier read)')
    .option('--checkpoint <file>', 'read the cursor from this file if it exists and write the last cursor back')
    .option('--summary <file>', 'with --format swebench: also write the SWE-bench run report here')
    .option(
      '--out <dir>',
      "with --format swebench: write SWE-bench's evaluation tree here: logs/run_evaluation/<run>/<model>/<instance>/{report.json,test_output.txt,patch.diff,eval.sh,run_instance.log} and <model>.<run>.json per model",
    )
    .option(
      '--groups',
      'stream completed RL groups (all samples of one episode, with reward mean and std) instead of results',
      false,
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 streamed, 3 unknown run or bad cursor, 4 Redis unreachable. The last cursor is printed on stderr as "cursor <id>".',
    )
    .action(async (flags: ResultsFlags) => {
      process.exitCode = await runResults(flags);
    });
}

async function runResults(flags: ResultsFlags): Promise<number> {
  if ((flags.out || flags.summary) && flags.format !== 'swebench') {
    console.error(`results: --out and --summary belong to --format swebench`);
    return EXIT.USAGE;
  }
  if (flags.groups && flags.format !== 'jsonl') {
    console.error(
      `results: --groups writes group events as JSON lines; it cannot be combined with --format ${flags.format}`,
    );
    return EXIT.USAGE;
  }
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  try {
    const { config } = loadContext();
    const { streamGroups, streamResults } = await import('@rollout-fleet/producer');
    const {
      STREAM_CURSOR_HINT,
      createKeyspace,
      integrityOf,
      isStreamCursor,
      openAiExportOf,
      swebenchTree,
      trainingRecordsOf,
    } = await import('@rollout-fleet/shared');
    const flagged = (r: EpisodeResult): boolean => {
      if (flags.integrity === undefined) return true;
      const verdict = integrityOf(r).verdict;
      return verdict === 'violated' || (flags.integrity === 'suspect' && verdict === 'suspect');
    };
    let after = flags.after;
    let from = '--after';
    if (!after && flags.checkpoint) {
      after = (await readFile(flags.checkpoint, 'utf8').catch(() => '')).trim() || undefined;
      from = `the checkpoint file ${flags.checkpoint}`;
    }
    if (after !== undefined && !isStreamCursor(after)) {
      console.error(`results: ${from}: "${after.slice(0, 80)}" is not a cursor; ${STREAM_CURSOR_HINT}`);
      return EXIT.INVALID_INPUT;
    }
    const { connectRedis } = await import('../runtime/redis.js');
    const redis = await connectRedis(config.redis);
    const { requireRun } = await import('@rollout-fleet/producer');
    try {
      await requireRun({ redis, keys: createKeyspace(config.queue.prefix), runId: flags.run });
    } catch (err) {
      redis.disconnect();
      throw err;
    }
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    process.once('SIGINT', stop);
    let cursor = after;
    const streamOptions = {
      redis,
      keys: createKeyspace(config.queue.prefix),
      runId: flags.run,
      follow: flags.follow,
      signal: controller.signal,
      onCursor: (next: string) => {
        cursor = next;
      },
      ...(after ? { after } : {}),
    };
    const graded: EpisodeResult[] = [];
    // The run's dataset as submitted, which SWE-bench's run report counts over.
    const dataset =
      flags.format === 'swebench'
        ? await redis.smembers(createKeyspace(config.queue.prefix).runDataset(flags.run))
        : [];
    if (flags.format === 'swebench' && !flags.follow) {
      // A prediction still running has no result yet: the report would count it as an instance without one.
      const [done, total] = await redis.hmget(createKeyspace(config.queue.prefix).run(flags.run), 'done', 'total');
      if (Number(done ?? 0) < Number(total ?? 0))
        console.error(
          `results: warning: run ${flags.run} is not finished (${done ?? 0} of ${total} episodes done); episodes without a result yet count as instances without a prediction (add --follow to wait for them)`,
        );
    }
    const skipped = { episodes: 0, turnsWithoutIds: 0 };
    const { addToTotals, fidelityHeader, fidelityRow, fidelitySummary } = await import('./fidelity-table.js');
    const totals = { replayed: 0, clean: 0, compared: 0, matched: 0 };
    if (flags.format === 'fidelity') process.stdout.write(`${fidelityHeader()}\n`);
    try {
      for await (const item of flags.groups ? streamGroups(streamOptions) : []) {
        cursor = item.streamId;
        process.stdout.write(`${JSON.stringify(item.group)}\n`);
      }
      for await (const item of flags.groups ? [] : streamResults(streamOptions)) {
        cursor = item.streamId;
        const r = item.result;
        if (!flagged(r)) continue;
        if (flags.format === 'jsonl') process.stdout.write(`${JSON.stringify(r)}\n`);
        else if (flags.format === 'fidelity') {
          addToTotals(totals, r);
          process.stdout.write(`${fidelityRow(r)}\n`);
        } else if (flags.format === 'openai') {
          const record = openAiExportOf(r);
          if (record === undefined) skipped.episodes += 1;
          else process.stdout.write(`${JSON.stringify(record)}\n`);
        } else if (flags.format === 'training') {
          const records = trainingRecordsOf(r);
          if (records.length === 0) skipped.episodes += 1;
          for (const record of records) {
            if (record.prompt_token_ids === null || record.completion_token_ids === null) skipped.turnsWithoutIds += 1;
            process.stdout.write(`${JSON.stringify(record)}\n`);
          }
        } else graded.push(r);
      }
    } finally {
      process.removeListener('SIGINT', stop);
      redis.disconnect();
    }
    if (flags.format === 'swebench') {
      const wholeLogs = await readWholeEvalLogs(graded, config.worker.artifactsDir);
      const tree = swebenchTree({
        runId: flags.run,
        results: graded,
        dataset,
        fullEvalLog: (r) => wholeLogs.get(r),
      });
      for (const warning of tree.warnings) console.error(`results: warning: ${warning}`);
      const code = await writeSwebench(tree, graded, flags);
      if (code !== EXIT.OK) return code;
    }
    if (flags.format === 'fidelity') process.stdout.write(`${fidelitySummary(flags.run, totals)}\n`);
    if (skipped.episodes > 0) {
      console.error(
        `${skipped.episodes} result(s) skipped: ${flags.format === 'openai' ? 'not policy episodes, or failed' : 'no reward (failed or not graded), or not policy episodes'}`,
      );
    }
    if (skipped.turnsWithoutIds > 0)
      console.error(
        `${skipped.turnsWithoutIds} turn(s) without token ids (the server returned none, or they disagreed with usage): see capture_problem in the results`,
      );
    if (cursor) {
      console.error(`cursor ${cursor}`);
      if (flags.checkpoint) await writeFile(flags.checkpoint, `${cursor}\n`);
    }
    return EXIT.OK;
  } catch (err) {
    return reportFailure('results', err);
  }
}

/**
 * `--out`: the tree on disk and, on stdout, the lines the harness prints; without it, stdout is the report entries
 * of every instance with a report.json, merged into one object (Python's json.dumps(indent=4) text). `--summary`: the run report of the run's one model.
 */
async function writeSwebench(
  tree: SwebenchTree,
  results: readonly EpisodeResult[],
  flags: ResultsFlags,
): Promise<number> {
  const { instanceLayout, toPythonJson } = await import('@rollout-fleet/shared');
  if (flags.summary && tree.reports.length > 1) {
    console.error(
      `results: --summary: the run has ${tree.reports.length} models (${tree.reports.map((r) => r.model_name_or_path).join(', ')}), one run report each; use --out <dir>`,
    );
    return EXIT.USAGE;
  }
  if (flags.summary) {
    const only = tree.reports[0];
    await writeFile(flags.summary, only === undefined ? '{}\n' : (tree.files.get(only.path) ?? ''));
  }
  if (!flags.out) {
    // The result's report entries (as this command always printed them) of the instances that have a report.json.
    const merged: Record<string, unknown> = {};
    for (const r of results)
      if (r.report !== null && instanceLayout(r).outcome === 'report') merged[r.instance_id] = r.report;
    process.stdout.write(`${toPythonJson(merged)}\n`);
    return EXIT.OK;
  }
  for (const [path, content] of tree.files) {
    const target = join(flags.out, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  for (const { path, report } of tree.reports) {
    // The harness's own summary lines (reporting.py), then where the report went.
    process.stdout.write(
      [
        `Total instances: ${report.total_instances}`,
        `Instances submitted: ${report.submitted_instances}`,
        `Instances completed: ${report.completed_instances}`,
        `Instances incomplete: ${report.incomplete_ids.length}`,
        `Instances resolved: ${report.resolved_instances}`,
        `Instances unresolved: ${report.unresolved_instances}`,
        `Instances with likely infrastructure failures: ${report.infra_failure_instances}`,
        `Instances with ambiguous failures: ${report.ambiguous_failure_instances}`,
        `Instances with empty patches: ${report.empty_patch_instances}`,
        `Instances with errors: ${report.error_instances}`,
        `Report written to ${join(flags.out, path)}`,
        '',
      ].join('\n'),
    );
  }
  return EXIT.OK;
}

/**
 * The whole eval logs of results whose copy was cut, from the files the worker wrote (RF_ARTIFACTS_DIR: this
 * host's setting first, else the directory the worker saw). Unreadable: test_output.txt keeps the cut copy and its
 * marker.
 */
async function readWholeEvalLogs(
  results: readonly EpisodeResult[],
  artifactsDir: string | undefined,
): Promise<Map<EpisodeResult, string>> {
  const logs = new Map<EpisodeResult, string>();
  for (const r of results) {
    const artifacts = r.artifacts;
    if (r.grading?.log_truncated !== true || artifacts === undefined || !artifacts.files.includes('eval.log')) continue;
    const text = await readFile(join(artifactsDir ?? artifacts.root, artifacts.path, 'eval.log'), 'utf8').catch(
      () => undefined,
    );
    if (text !== undefined) logs.set(r, text);
    else
      console.error(`results: warning: ${r.instance_id}: the whole eval log is not readable; test_output.txt is cut`);
  }
  return logs;
}
