/**
 * A newcomer's first episode, exactly as docs/grading.md tells it: the doc's tagged code blocks are the test.
 * The blocks are read in order —
 *   ```sh first-episode:worker        a command started in the background (the worker, embedded vefaas-local)
 *   ```json first-episode:file:NAME   a file written under NAME in a fresh directory
 *   ```sh first-episode:run           commands run one after another through the real CLI (each must exit 0)
 *   ```text first-episode:stdout      the exact stdout of the last command of the run block before it
 *   ```json first-episode:grading:ID  the `grading` block of episode ID's result (its log fields aside)
 *   ```text first-episode:joblog:ID   the grade's lines in episode ID's job log
 * — so the worked examples cannot rot: change the behaviour and this fails until the doc says the new truth.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { EpisodeResultSchema, jobIdFor, type EpisodeResult } from '@rollout-fleet/shared';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { itWith, systemProgramNeed } from '@rollout-fleet/test-kit/needs';
import { formatGradingLog } from '@rollout-fleet/worker';
import {
  CLI,
  childEnv,
  configOf,
  openPipeline,
  runCli,
  stopChild,
  testEnv,
  type Pipeline,
} from './support/pipeline-harness.js';

const DOC = new URL('../docs/grading.md', import.meta.url);
/** `npx rollout-fleet` is how the doc calls the CLI; the test runs the same bin/rollout-fleet.js directly. */
const CALL = 'npx rollout-fleet ';

interface Block {
  kind: 'worker' | 'file' | 'run' | 'stdout' | 'grading' | 'joblog';
  arg: string;
  text: string;
  line: number;
}

/** The doc's tagged fenced blocks, in order. */
function taggedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```\S*\s+first-episode:(\w+)(?::(\S+))?\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`docs/grading.md:${i + 1}: unclosed block`);
    blocks.push({
      kind: open[1] as Block['kind'],
      arg: open[2] ?? '',
      text: lines.slice(i + 1, end).join('\n'),
      line: i + 1,
    });
    i = end;
  }
  return blocks;
}

/** The commands of a shell block: one per line, `#` comments and blank lines skipped, words split on spaces. */
function commandsOf(block: Block): string[][] {
  return block.text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      if (!line.startsWith(CALL))
        throw new Error(`docs/grading.md:${block.line}: "${line}" is not a ${CALL.trim()} command`);
      return line.slice(CALL.length).split(/\s+/);
    });
}

/** The grading block without its log fields (the log, its size and cut, the eval script and where its output starts). */
const withoutLog = (grading: EpisodeResult['grading']): Record<string, unknown> => {
  const {
    log: _log,
    log_bytes: _bytes,
    log_truncated: _truncated,
    eval_script: _script,
    eval_output_offset: _offset,
    ...rest
  } = grading ?? {};
  return rest;
};

describe('docs/grading.md, followed literally', () => {
  let dir: string;
  let env: Record<string, string>;
  let pipeline: Pipeline;
  const workers: Array<ChildProcess & { log: () => string }> = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-first-episode-'));
    env = testEnv();
    pipeline = openPipeline(configOf(env));
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => stopChild(worker)));
    await pipeline?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  itWith(
    [bwrapNeed(), systemProgramNeed('pytest', 'python3-pytest')],
    'runs every worked example and gets the documented outcome',
    async () => {
      const blocks = taggedBlocks(await readFile(DOC, 'utf8'));
      // What the doc must hold, so that a block dropped by an edit cannot pass silently.
      expect(blocks.filter((b) => b.kind === 'worker')).toHaveLength(1);
      expect(blocks.filter((b) => b.kind === 'file').map((b) => b.arg)).toEqual([
        'first-unittest.json',
        'first-pytest.json',
        'first-mistake.json',
      ]);
      expect(blocks.filter((b) => b.kind === 'grading').map((b) => b.arg)).toEqual([
        'pyutils__first-unittest',
        'pyutils__first-pytest',
        'pyutils__first-mistake',
      ]);
      expect(blocks.filter((b) => b.kind === 'stdout').length).toBeGreaterThanOrEqual(3);
      expect(blocks.filter((b) => b.kind === 'joblog').map((b) => b.arg)).toEqual(['pyutils__first-mistake']);

      /** Episode `pyutils__<run>`'s result, read back through `results` as a user would. */
      const resultOf = async (episodeId: string): Promise<EpisodeResult> => {
        const results = await runCli(
          ['results', '--run', episodeId.replace(/^pyutils__/, ''), '--format', 'jsonl'],
          env,
        );
        expect(results.code, results.stderr).toBe(0);
        const result = EpisodeResultSchema.parse(JSON.parse(results.stdout.trim()));
        expect(result.episode_id).toBe(episodeId);
        return result;
      };

      const files = new Set<string>();
      let lastStdout: string | undefined;
      for (const block of blocks) {
        const where = `docs/grading.md:${block.line}`;
        if (block.kind === 'worker') {
          const [args] = commandsOf(block);
          const child = spawn(process.execPath, [CLI, ...args!], {
            env: childEnv(env),
            stdio: ['ignore', 'ignore', 'pipe'],
            cwd: dir,
          });
          let log = '';
          child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-20_000)));
          workers.push(Object.assign(child, { log: () => log }));
        } else if (block.kind === 'file') {
          await writeFile(join(dir, block.arg), `${block.text}\n`);
          files.add(block.arg);
        } else if (block.kind === 'run') {
          for (const args of commandsOf(block)) {
            // The doc's relative file names, in the directory its files were written to.
            const run = await runCli(
              args.map((arg) => (files.has(arg) ? join(dir, arg) : arg)),
              env,
            );
            expect(run.code, `${where}: ${args.join(' ')}\n${run.stderr}\nworker: ${workers[0]?.log() ?? ''}`).toBe(0);
            lastStdout = run.stdout;
          }
        } else if (block.kind === 'stdout') {
          expect(lastStdout, `${where}: the output documented for the command before it`).toBe(`${block.text}\n`);
        } else if (block.kind === 'joblog') {
          const result = await resultOf(block.arg);
          expect(
            formatGradingLog(result.grading!, result.resolved === true),
            `${where}: the documented job-log lines`,
          ).toBe(block.text);
          // …and the worker wrote exactly those lines into the job's log.
          const logs = await pipeline.queue.getJobLogs(jobIdFor(result.run_id, result.episode_id, result.sample_index));
          expect(logs.logs.join('\n')).toContain(block.text);
        } else {
          const result = await resultOf(block.arg);
          expect(withoutLog(result.grading), `${where}: the documented grading block`).toEqual(JSON.parse(block.text));
          // The log the doc leaves out is there, with the harness's markers (carrying the eval's nonce) around the
          // test output.
          expect(result.grading?.log).toMatch(/>>>>> Start Test Output rf:\S+/);
          expect(result.grading?.log_truncated).toBe(false);
        }
      }
      expect(workers[0]?.exitCode, workers[0]?.log()).toBeNull();
    },
    300_000,
  );
});
