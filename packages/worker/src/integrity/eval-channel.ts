/**
 * The result channel's life in one eval (docs/adversarial-grading.md, "The result channel"): before the eval the
 * grader's modules, the marker nonce and the channel key are written into the grading sandbox outside the
 * repository (a fresh directory per eval); after it, the channel is read back and checked against the log.
 * Every finding is `violated`; grade-in-sandbox.ts grades only the region between the nonce markers.
 *
 * Wire contract: SWE-ReX `POST /write_file` (modules, nonce, key), `POST /execute` (`/bin/cat` of the channel).
 */
import { randomBytes } from 'node:crypto';
import type { EvalSpec, IntegrityFinding } from '@rollout-fleet/shared';
import type { GradingShell } from '../grading/grading-shell.js';
import { parseTestOutput } from '../grading/parse-log.js';
import { untestedView } from '../grading/test-log-view.js';
import type { ParserName } from '../grading/types.js';
import { instrumentEvalScript, newNonce, readMarkedRegion, regionLog, type ChannelMode } from './eval-nonce.js';
import { graderFiles } from './grader-dir.js';
import { channelModeFor, compareWithLog, readChannel } from './result-channel.js';

export interface EvalChannel {
  mode: ChannelMode;
  parser: ParserName;
  /** Rewrites the eval script: the nonce read first, markers carrying it, the channel's variables. */
  instrument(script: string): string;
  /** After the eval: the region log to grade and everything found. */
  check(o: {
    output: string;
    timedOut: boolean;
    timeoutS: number;
  }): Promise<{ log: string; findings: IntegrityFinding[] }>;
}

const READ_TIMEOUT_S = 30;

export async function openEvalChannel(
  shell: GradingShell,
  spec: Pick<EvalSpec, 'repo' | 'log_parser' | 'test_command' | 'FAIL_TO_PASS' | 'PASS_TO_PASS'>,
  workDir: string,
): Promise<EvalChannel> {
  const view = untestedView(spec);
  const mode = channelModeFor(view.parser, spec.test_command);
  // A directory of its own per eval: nothing of an earlier eval (in place) is read, and its name is not known ahead.
  const dir = `${workDir}/grader-${randomBytes(6).toString('hex')}`;
  const graderDir = `${dir}/py`;
  const channelDir = `${dir}/channel`;
  const nonceFile = `${dir}/nonce`;
  const nonce = newNonce();
  const key = newNonce();
  await shell.writeFile(nonceFile, `${nonce}\n`);
  if (mode !== 'none') {
    for (const file of graderFiles()) await shell.writeFile(`${graderDir}/${file.name}`, file.content);
    await shell.writeFile(`${channelDir}/key`, key);
  }
  return {
    mode,
    parser: view.parser,
    instrument: (script) => instrumentEvalScript(script, { nonceFile, channelDir, graderDir, mode }),
    async check({ output, timedOut, timeoutS }) {
      const region = readMarkedRegion(output, nonce, view.parser);
      const findings = [...region.findings];
      if (timedOut)
        findings.push({
          code: 'EVAL_TIMED_OUT',
          severity: 'violated',
          detail: `the eval ran past its ${timeoutS} s timeout and was stopped: its output is not a complete run`,
        });
      if (mode !== 'none') {
        const read = await shell.execute({
          command: ['/bin/cat', `${channelDir}/results.jsonl`],
          merge_output_streams: false,
          timeout: READ_TIMEOUT_S,
        });
        const channel = readChannel(read.exit_code === 0 ? read.stdout : '', key);
        findings.push(...channel.findings);
        if (region.between !== null && channel.started) {
          const log = parseTestOutput(region.between, view.parser);
          findings.push(
            ...compareWithLog({
              channel: channel.statuses,
              log,
              failToPass: spec.FAIL_TO_PASS,
              passToPass: spec.PASS_TO_PASS,
              mode: view.mode,
            }),
          );
        }
      }
      return { log: regionLog(region.between), findings };
    },
  };
}
