import { problemAt, type Problem } from '../validation/problem.js';
import { fileExtension, isRecord, jsonSyntaxProblem, parseJsonLines, parseJsonText } from './json-source.js';
import { isMiniSweAgentTrajectory } from './mini-swe-agent.js';
import type { InputFile } from './types.js';

export type InputFormat =
  'native' | 'swe-agent-traj' | 'mini-swe-agent' | 'openai-messages' | 'swebench-dataset' | 'swebench-predictions';

export const INPUT_FORMATS: readonly InputFormat[] = [
  'native',
  'swe-agent-traj',
  'mini-swe-agent',
  'openai-messages',
  'swebench-dataset',
  'swebench-predictions',
];

const NATIVE_KEYS = ['episode_id', 'run_id', 'sandbox', 'trajectory', 'eval', 'sample_index', 'policy'];
const DATASET_KEYS = ['problem_statement', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'test_patch'];

function has(record: Record<string, unknown>, keys: readonly string[]): boolean {
  return keys.some((key) => Object.hasOwn(record, key));
}

function isPrediction(value: unknown): boolean {
  return (
    isRecord(value) &&
    (Object.hasOwn(value, 'model_patch') || Object.hasOwn(value, 'model_name_or_path')) &&
    !has(value, NATIVE_KEYS)
  );
}

/** What one JSON record looks like; undefined when it matches nothing we read. */
export function classifyRecord(value: unknown): InputFormat | undefined {
  if (isMiniSweAgentTrajectory(value)) return 'mini-swe-agent';
  if (Array.isArray(value)) {
    const first: unknown = value[0];
    if (isRecord(first) && typeof first['role'] === 'string') return 'openai-messages';
    return first === undefined ? undefined : classifyRecord(first);
  }
  if (!isRecord(value)) return undefined;
  const trajectoryFile =
    Array.isArray(value['trajectory']) && has(value, ['info', 'history', 'environment', 'replay_config']);
  if (Array.isArray(value['history']) || trajectoryFile) return 'swe-agent-traj';
  if (Array.isArray(value['messages'])) return 'openai-messages';
  // Native episodes may carry a problem_statement (policy episodes); SWE-bench instances never carry native keys.
  if (has(value, NATIVE_KEYS)) return 'native';
  if (has(value, DATASET_KEYS)) return 'swebench-dataset';
  if (isPrediction(value)) return 'swebench-predictions';
  const values = Object.values(value);
  if (values.length > 0 && values.every(isPrediction)) return 'swebench-predictions';
  if (Object.hasOwn(value, 'instance_id')) return 'native';
  return undefined;
}

/**
 * Format of one input file: `.traj`/`.yaml`/`.yml` are SWE-agent trajectories or demonstrations; `.jsonl` is
 * sniffed from its first record; anything else must be JSON and is sniffed from its content.
 */
export function detectFormat(file: InputFile): { ok: true; format: InputFormat } | { ok: false; problem: Problem } {
  const ext = fileExtension(file.path);
  if (ext === 'traj' || ext === 'yaml' || ext === 'yml') return { ok: true, format: 'swe-agent-traj' };
  if (file.text.trim() === '') {
    return {
      ok: false,
      problem: problemAt({ file: file.path }, { message: 'empty file', hint: 'remove it from the inputs or fill it' }),
    };
  }
  let sample: unknown;
  if (ext === 'jsonl' || ext === 'ndjson') {
    const { records, problems } = parseJsonLines(file);
    const first = records[0];
    if (first === undefined) {
      return {
        ok: false,
        problem:
          problems[0] ??
          problemAt({ file: file.path }, { message: 'no JSON records', hint: 'write one JSON object per line' }),
      };
    }
    sample = first.value;
  } else {
    const parsed = parseJsonText(file.text);
    if (!parsed.ok) {
      const problem = jsonSyntaxProblem(file, parsed);
      const newline = file.text.indexOf('\n');
      const firstLine = newline === -1 ? file.text : file.text.slice(0, newline);
      if (parsed.reason === 'syntax' && parseJsonText(firstLine).ok)
        problem.hint = 'this looks like JSONL (one record per line): name the file *.jsonl';
      return { ok: false, problem };
    }
    sample = parsed.value;
  }
  const format = classifyRecord(sample);
  if (format !== undefined) return { ok: true, format };
  return {
    ok: false,
    problem: problemAt(
      { file: file.path },
      {
        message: 'unknown input format',
        hint: 'give native episodes (JSON/JSONL), a SWE-agent .traj or demonstration .yaml, a mini-swe-agent .traj.json, OpenAI chat messages with tool_calls, or a SWE-bench dataset / predictions file',
      },
    ),
  };
}
