import { PolicySchema, type PolicyInput } from '@rollout-fleet/shared';
import { problemAt, type Problem } from '../validation/problem.js';
import {
  describeType,
  fileExtension,
  formatFieldPath,
  isRecord,
  jsonSyntaxProblem,
  parseJsonText,
} from './json-source.js';
import type { InputFile } from './types.js';
import { parseYamlText, yamlParseText } from './yaml-source.js';

/**
 * `submit --policy FILE`: one policy block (JSON, or YAML for `.yaml`/`.yml`) attached to every episode of the
 * submission. The file holds the block itself, or `{"policy": {...}}`. It is checked on its own first, so a mistake
 * in it is reported once, at the file, not once per episode. The block names the key's environment variable
 * (`api_key_env`); a literal key has nowhere to go (unknown keys are errors).
 */
export function readPolicyFile(file: InputFile): { policy?: PolicyInput; problems: Problem[] } {
  const at = { file: file.path };
  let document: unknown;
  const ext = fileExtension(file.path);
  if (ext === 'yaml' || ext === 'yml') {
    const parsed = parseYamlText(file.text);
    if (!parsed.ok)
      return {
        problems: [
          problemAt(
            parsed.line === undefined ? at : { ...at, line: parsed.line },
            yamlParseText(parsed, 'fix the YAML syntax of the policy file'),
          ),
        ],
      };
    document = parsed.value;
  } else {
    const parsed = parseJsonText(file.text);
    if (!parsed.ok) return { problems: [jsonSyntaxProblem(file, parsed)] };
    document = parsed.value;
  }
  const block =
    isRecord(document) && isRecord(document['policy']) && Object.keys(document).length === 1
      ? document['policy']
      : document;
  if (!isRecord(block)) {
    return {
      problems: [
        problemAt(at, {
          field: 'policy',
          message: `expected a policy object, got ${describeType(block)}`,
          hint: 'give {"base_url", "model", "sampling": {...}, ...} (see docs/policy.md)',
        }),
      ],
    };
  }
  const checked = PolicySchema.safeParse(block);
  if (checked.success) return { policy: block as PolicyInput, problems: [] };
  return {
    problems: checked.error.issues.map((issue) => {
      const field = formatFieldPath(['policy', ...issue.path]);
      const missing =
        issue.code === 'invalid_type' &&
        issue.path.reduce<unknown>((value, key) => (isRecord(value) ? value[String(key)] : undefined), block) ===
          undefined;
      return problemAt(at, {
        field,
        message: missing ? `missing (${issue.message})` : issue.message,
        hint:
          issue.code === 'unrecognized_keys'
            ? 'remove it: the policy block is strict (see docs/policy.md for its fields)'
            : `fix ${field} (see docs/policy.md)`,
      });
    }),
  };
}
