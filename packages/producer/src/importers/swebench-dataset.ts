import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { describeType, isRecord, parseJsonText, readJsonRecords } from './json-source.js';
import { specForRepoVersion } from './test-commands.js';
import type { EvalInput, InputFile } from './types.js';

/**
 * The SWE-bench instance fields grading needs (trajectories-and-grading.md §4), and the problem statement a policy
 * is given. Other keys (hints_text, created_at, ...) are ignored; v5 keys `eval_script` and `image_name` are used
 * when present.
 */
export interface SweBenchInstance {
  instance_id: string;
  repo: string;
  base_commit?: string;
  /** Gold patch, used for `gold` predictions. */
  patch?: string;
  test_patch?: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  version?: string;
  eval_script?: string;
  image_name?: string;
  test_cmd?: string;
  /** The issue text a policy is given. */
  problem_statement?: string;
}

export interface LocatedInstance {
  instance: SweBenchInstance;
  location: RecordLocation;
  /** The record as written (its JSONL line; else its JSON value re-serialized): tells identical duplicates apart. */
  source: string;
}

/** A SWE-bench dataset file: JSON list (or one object) or JSONL of instances. */
export function parseSweBenchInstances(file: InputFile): { instances: LocatedInstance[]; problems: Problem[] } {
  const { records, problems } = readJsonRecords(file);
  const instances: LocatedInstance[] = [];
  let lines: string[] | undefined;
  for (const { value, location } of records) {
    const parsed = parseInstance(value, location);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      continue;
    }
    let source: string | undefined;
    if (location.line !== undefined) {
      lines ??= file.text.split('\n');
      source = lines[location.line - 1]?.trim();
    }
    instances.push({ instance: parsed.instance, location, source: source ?? JSON.stringify(value) });
  }
  return { instances, problems };
}

function parseInstance(
  value: unknown,
  location: RecordLocation,
): { ok: true; instance: SweBenchInstance } | { ok: false; problems: Problem[] } {
  if (!isRecord(value)) {
    return {
      ok: false,
      problems: [
        problemAt(location, {
          message: `expected an instance object, got ${describeType(value)}`,
          hint: 'give a list of SWE-bench instances',
        }),
      ],
    };
  }
  const problems: Problem[] = [];
  const requiredString = (field: string): string => {
    const v = value[field];
    if (typeof v === 'string' && v !== '') return v;
    problems.push(
      problemAt(location, {
        field,
        message: v === undefined ? 'missing (expected string)' : `expected a non-empty string, got ${describeType(v)}`,
        hint: `add "${field}" (SWE-bench instances carry instance_id, repo, base_commit, test_patch, FAIL_TO_PASS, PASS_TO_PASS)`,
      }),
    );
    return '';
  };
  const instanceId = requiredString('instance_id');
  const repo = requiredString('repo');
  const failToPass = testList(value, 'FAIL_TO_PASS', location, problems);
  const passToPass = testList(value, 'PASS_TO_PASS', location, problems);
  if (problems.length > 0) return { ok: false, problems };

  const instance: SweBenchInstance = {
    instance_id: instanceId,
    repo,
    FAIL_TO_PASS: failToPass,
    PASS_TO_PASS: passToPass,
  };
  for (const key of [
    'base_commit',
    'patch',
    'test_patch',
    'eval_script',
    'image_name',
    'test_cmd',
    'problem_statement',
  ] as const) {
    const v = value[key];
    if (typeof v === 'string' && v !== '') instance[key] = v;
  }
  // Versions are strings in the datasets ("4.2"), but hand-written files sometimes say 4.2.
  const version = value['version'];
  if (typeof version === 'string' || typeof version === 'number') instance.version = String(version);
  return { ok: true, instance };
}

/** Plain lists in some files, JSON-encoded strings in the Hugging Face datasets; absent → []. */
function testList(
  record: Record<string, unknown>,
  field: string,
  location: RecordLocation,
  problems: Problem[],
): string[] {
  let value = record[field];
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') {
    const parsed = parseJsonText(value);
    value = parsed.ok ? parsed.value : undefined;
  }
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  problems.push(
    problemAt(location, {
      field,
      message: `expected a list of test names, got ${describeType(record[field])}${typeof record[field] === 'string' ? ' that is not a JSON list of strings' : ''}`,
      hint: 'give a list of strings, or a JSON-encoded list as in the Hugging Face datasets',
    }),
  );
  return [];
}

export interface EvalSpecOptions {
  /** Replaces the per-repo default test command. */
  testCommand?: string;
}

/** The eval spec of one instance: its own eval_script or test_cmd, else the per-repo SWE-bench test command. */
export function evalSpecForInstance(instance: SweBenchInstance, options: EvalSpecOptions = {}): EvalInput {
  const spec: EvalInput = {
    repo: instance.repo,
    FAIL_TO_PASS: instance.FAIL_TO_PASS,
    PASS_TO_PASS: instance.PASS_TO_PASS,
  };
  if (instance.base_commit !== undefined) spec.base_commit = instance.base_commit;
  if (instance.test_patch !== undefined) spec.test_patch = instance.test_patch;
  if (instance.eval_script !== undefined) {
    spec.eval_script = instance.eval_script;
    return spec;
  }
  // Keyed by repo and version, as SWE-bench keys it (astropy 0.1–1.3 and django 1.9 have their own commands).
  const repoSpec = specForRepoVersion(instance.repo, instance.version);
  spec.test_command = options.testCommand ?? instance.test_cmd ?? repoSpec.testCommand;
  if (repoSpec.install !== undefined) spec.install = repoSpec.install;
  if (repoSpec.evalCommands !== undefined) spec.eval_commands = [...repoSpec.evalCommands];
  return spec;
}
