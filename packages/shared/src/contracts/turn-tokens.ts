/**
 * Per-turn token ids stored as "the prefix shared with the previous turn's prompt + completion, then the rest", so
 * a long episode does not store its growing prompt once per turn; `expandPromptIds` restores each turn's full
 * prompt. `extends_previous` tells a trainer whether consecutive turns can be merged into one sequence.
 */
import type { TurnTokens } from './turn-record.js';

export interface FullTurnIds {
  promptIds: readonly number[];
  completionIds: readonly number[];
}

export function encodeTurnTokens(current: FullTurnIds, previous: FullTurnIds | undefined): TurnTokens {
  let reused = 0;
  if (previous !== undefined) {
    const before = [...previous.promptIds, ...previous.completionIds];
    const limit = Math.min(before.length, current.promptIds.length);
    while (reused < limit && before[reused] === current.promptIds[reused]) reused += 1;
  }
  const previousLength = previous === undefined ? -1 : previous.promptIds.length + previous.completionIds.length;
  return {
    prompt_len: current.promptIds.length,
    prompt_ids_reused: reused,
    prompt_ids_tail: current.promptIds.slice(reused),
    completion_ids: [...current.completionIds],
    extends_previous: reused === previousLength,
  };
}

/**
 * Full prompt ids of every turn, from the encoded records in order. A turn whose tokens are null breaks the chain:
 * a later turn can only reuse ids of the turn right before it, so it is then undefined as well unless it reuses none.
 */
export function expandPromptIds(turns: ReadonlyArray<{ tokens: TurnTokens | null }>): Array<number[] | undefined> {
  const out: Array<number[] | undefined> = [];
  let previous: number[] | undefined;
  for (const turn of turns) {
    const tokens = turn.tokens;
    if (tokens === null) {
      out.push(undefined);
      previous = undefined;
      continue;
    }
    if (tokens.prompt_ids_reused > 0 && previous === undefined) {
      out.push(undefined);
      continue;
    }
    const prompt = [...(previous ?? []).slice(0, tokens.prompt_ids_reused), ...tokens.prompt_ids_tail];
    out.push(prompt);
    previous = [...prompt, ...tokens.completion_ids];
  }
  return out;
}
