/**
 * Token ids and logprobs of one turn, exactly as the server returned them, checked against `usage` (policy-loop.md
 * §6.5): `len(prompt ids) == usage.prompt_tokens`, `len(completion ids) == len(logprobs) == usage.completion_tokens`.
 * Nothing is guessed or re-tokenized: absent or inconsistent data becomes null, with the reason.
 */
import type { Usage } from '@rollout-fleet/shared';
import type { LogprobEntry } from './parse-completion.js';

export interface CapturedTokens {
  promptIds: number[] | null;
  completionIds: number[] | null;
  logprobs: number[] | null;
  /** Why something asked for is null. */
  problems: string[];
}

/** vLLM's `return_tokens_as_token_ids` spells each logprob token `token_id:<id>`. */
const TOKEN_ID_SPELLING = /^token_id:(\d+)$/;

function idList(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.every((id) => Number.isInteger(id) && (id as number) >= 0) ? (value as number[]) : undefined;
}

function idsFromLogprobTokens(entries: readonly LogprobEntry[] | undefined): number[] | undefined {
  if (entries === undefined || entries.length === 0) return undefined;
  const ids: number[] = [];
  for (const entry of entries) {
    const match = TOKEN_ID_SPELLING.exec(entry.token);
    if (!match) return undefined;
    ids.push(Number(match[1]));
  }
  return ids;
}

export function captureTokens(input: {
  usage: Usage | null;
  promptTokenIds: unknown;
  completionTokenIds: unknown;
  logprobs: readonly LogprobEntry[] | undefined;
  want: { tokenIds: boolean; logprobs: boolean };
}): CapturedTokens {
  const { usage, want } = input;
  const problems: string[] = [];
  let promptIds: number[] | null = null;
  let completionIds: number[] | null = null;
  let logprobs: number[] | null = null;

  if (want.tokenIds) {
    const prompt = idList(input.promptTokenIds);
    const completion = idList(input.completionTokenIds) ?? idsFromLogprobTokens(input.logprobs);
    if (prompt === undefined || completion === undefined) {
      problems.push(
        `the server returned no ${prompt === undefined ? 'prompt' : 'completion'} token ids (vLLM ≥ 0.10.2 or SGLang with return_token_ids)`,
      );
    } else if (usage === null) {
      problems.push('token ids returned without usage to check them against');
    } else if (prompt.length !== usage.prompt_tokens) {
      problems.push(`${prompt.length} prompt token ids but usage.prompt_tokens is ${usage.prompt_tokens}`);
    } else if (completion.length !== usage.completion_tokens) {
      problems.push(
        `${completion.length} completion token ids but usage.completion_tokens is ${usage.completion_tokens}`,
      );
    } else {
      promptIds = prompt;
      completionIds = completion;
    }
  }

  if (want.logprobs) {
    const entries = input.logprobs;
    if (entries === undefined) {
      problems.push('the server returned no logprobs');
    } else if (!entries.every((entry) => Number.isFinite(entry.logprob))) {
      problems.push('a logprob entry has no numeric logprob');
    } else if (usage === null) {
      problems.push('logprobs returned without usage to check them against');
    } else if (entries.length !== usage.completion_tokens) {
      problems.push(`${entries.length} logprobs but usage.completion_tokens is ${usage.completion_tokens}`);
    } else {
      logprobs = entries.map((entry) => entry.logprob);
    }
  }
  return { promptIds, completionIds, logprobs, problems };
}
