import { ERROR_CODES, EpisodeSchema, didYouMean, editDistance, type EpisodeInput } from '@rollout-fleet/shared';
import { TOOL_CALL_NAMES } from '@rollout-fleet/sandbox';
import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { describeType, formatFieldPath, isRecord } from './json-source.js';

type Issue = NonNullable<ReturnType<typeof EpisodeSchema.safeParse>['error']>['issues'][number];

/** Field-specific advice; everything else gets a generic "add it" / "give it as X". */
const FIELD_HINTS: Record<string, string> = {
  arguments: 'give arguments as an object or a JSON string',
  image: 'set sandbox.image in the record, or pass a default image (--image) or an image template (--image-template)',
  run_id: 'ids may use letters, digits and . _ @ + - / only (at most 200 characters)',
  episode_id: 'ids may use letters, digits and . _ @ + - / only (at most 200 characters)',
  FAIL_TO_PASS: 'give a list of test names (a JSON-encoded list is accepted too)',
  PASS_TO_PASS: 'give a list of test names (a JSON-encoded list is accepted too)',
  test_command: 'set eval.test_command (e.g. "pytest -rA") or eval.eval_script',
  tools: 'list tools from: execute_bash, str_replace_editor',
};

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = root;
  for (const key of path) {
    if (Array.isArray(value) && typeof key === 'number') value = value[key];
    else if (isRecord(value) && typeof key === 'string') value = value[key];
    else return undefined;
  }
  return value;
}

function expectedName(expected: string): string {
  return expected === 'record' ? 'object' : expected;
}

function lastName(path: readonly PropertyKey[]): string | undefined {
  for (let i = path.length - 1; i >= 0; i -= 1) {
    const key = path[i];
    if (typeof key === 'string') return key;
  }
  return undefined;
}

function issueToProblem(issue: Issue, record: unknown, location: RecordLocation): Problem {
  const field = formatFieldPath(issue.path);
  const name = lastName(issue.path);
  // Own keys only: a field called `constructor` must not find Object.prototype's.
  const specific = name !== undefined && Object.hasOwn(FIELD_HINTS, name) ? FIELD_HINTS[name] : undefined;
  if (issue.code === 'invalid_type') {
    const received = valueAt(record, issue.path);
    const expected = expectedName(issue.expected);
    if (received === undefined) {
      return problemAt(location, {
        field,
        message: `missing (expected ${expected})`,
        hint: specific ?? `add "${field}"`,
      });
    }
    return problemAt(location, {
      field,
      message: `expected ${expected}, got ${describeType(received)}`,
      hint: specific ?? `give ${field} as ${expected}`,
    });
  }
  if (issue.code === 'unrecognized_keys') {
    // A misspelled field ("sandbx", "FAIL_TO_PAS") gets the field it most likely meant, as environment variables do.
    const known = objectKeysAt(issue.path);
    const guesses = issue.keys
      .map((key) => [key, didYouMean(key, known)] as const)
      .filter(([, guess]) => guess !== undefined);
    if (guesses.length > 0) {
      return problemAt(location, {
        field,
        message: issue.message,
        hint: guesses.map(([key, guess]) => `did you mean "${guess}" (not "${key}")?`).join('; '),
      });
    }
  }
  return problemAt(location, { field, message: issue.message, hint: specific ?? ERROR_CODES.INPUT_INVALID.hint });
}

/** The structural part of a zod v4 schema this module walks (object shapes, array elements, wrappers). */
interface SchemaNode {
  _zod: {
    def: {
      type: string;
      shape?: Record<string, SchemaNode>;
      element?: SchemaNode;
      innerType?: SchemaNode;
      in?: SchemaNode;
    };
  };
}

const WRAPPERS = new Set(['optional', 'default', 'nullable', 'prefault', 'readonly', 'catch', 'pipe']);

/** The keys an object of EpisodeSchema at `path` may have (empty when the path leads elsewhere). */
function objectKeysAt(path: readonly PropertyKey[]): string[] {
  let node: SchemaNode | undefined = EpisodeSchema as unknown as SchemaNode;
  const unwrap = (): void => {
    while (node !== undefined && WRAPPERS.has(node._zod.def.type)) node = node._zod.def.innerType ?? node._zod.def.in;
  };
  for (const key of path) {
    unwrap();
    if (node === undefined) return [];
    const def: SchemaNode['_zod']['def'] = node._zod.def;
    node =
      typeof key === 'number'
        ? def.type === 'array'
          ? def.element
          : undefined
        : def.type === 'object' && typeof key === 'string' && def.shape && Object.hasOwn(def.shape, key)
          ? def.shape[key]
          : undefined;
  }
  unwrap();
  return node?._zod.def.type === 'object' ? Object.keys(node._zod.def.shape ?? {}) : [];
}

/**
 * A recorded action whose tool name is one edit (two for longer names) from a tool of the episode ("exeute_bash") is a typo
 * of whoever wrote the episode, not a model's choice: refused with the name it meant. Names far from every tool
 * ("open_file") stay what a model may call: replayed as an error observation. Episodes recorded with another
 * tool bundle (SWE-agent, mini-swe-agent) name that bundle's commands and are not checked here.
 */
function misspelledTools(episode: EpisodeInput, location: RecordLocation): Problem[] {
  if (episode.tool_bundle !== undefined) return [];
  const known: string[] = [...new Set<string>([...(episode.tools ?? []), ...TOOL_CALL_NAMES])];
  const problems: Problem[] = [];
  (episode.trajectory ?? []).forEach((call, index) => {
    if (known.includes(call.name)) return;
    // Short names are a typo only one edit away ("bsh"), not two ("sh" is another command a model may try).
    const limit = call.name.length < 6 ? 1 : 2;
    const guess = known.find((name) => editDistance(call.name, name) <= limit);
    if (guess === undefined) return;
    problems.push(
      problemAt(location, {
        field: `trajectory[${index}].name`,
        message: `unknown tool "${call.name}"`,
        hint: `did you mean "${guess}"? (tools: ${known.join(', ')})`,
      }),
    );
  });
  return problems;
}

/**
 * Checks one candidate against EpisodeSchema. Returns the candidate itself (not zod's output) so callers keep
 * the wire shape and defaults are applied once, later, by validateInputs.
 */
export function checkEpisode(
  candidate: unknown,
  location: RecordLocation,
): { ok: true; episode: EpisodeInput } | { ok: false; problems: Problem[] } {
  const parsed = EpisodeSchema.safeParse(candidate);
  if (!parsed.success)
    return { ok: false, problems: parsed.error.issues.map((issue) => issueToProblem(issue, candidate, location)) };
  const reserved = reservedKeyFields(candidate).map((field) =>
    problemAt(location, {
      field,
      message: 'the key "__proto__" is not allowed here',
      hint: 'rename the key: it would be dropped when the episode is read, so the replay would differ from the recording',
    }),
  );
  if (reserved.length > 0) return { ok: false, problems: reserved };
  const typos = misspelledTools(candidate as EpisodeInput, location);
  if (typos.length > 0) return { ok: false, problems: typos };
  return { ok: true, episode: candidate as EpisodeInput };
}

/**
 * Fields of the free-form maps (tool arguments, sandbox env, metadata) that hold an own `__proto__` key. JSON.parse
 * keeps such a key as data, but zod's record parsing (like any plain assignment) drops it: accepting it would
 * replay other arguments than were recorded, silently.
 */
function reservedKeyFields(candidate: unknown): string[] {
  if (!isRecord(candidate)) return [];
  const maps: Array<[string, unknown]> = [['metadata', candidate['metadata']]];
  const sandbox = candidate['sandbox'];
  if (isRecord(sandbox)) maps.push(['sandbox.env', sandbox['env']]);
  const trajectory = candidate['trajectory'];
  if (Array.isArray(trajectory)) {
    trajectory.forEach((call: unknown, index) => {
      if (isRecord(call)) maps.push([`trajectory[${index}].arguments`, call['arguments']]);
    });
  }
  return maps
    .filter(([, map]) => isRecord(map) && Object.hasOwn(map, '__proto__'))
    .map(([field]) => `${field}.__proto__`);
}
