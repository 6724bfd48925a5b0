import { RolloutError } from './rollout-error.js';

/** Normalises anything thrown into a RolloutError; unknown throws become INTERNAL with the original as `cause`. */
export function coerceError(thrown: unknown): RolloutError {
  if (thrown instanceof RolloutError) return thrown;
  if (thrown instanceof Error) return new RolloutError('INTERNAL', thrown.message, { cause: thrown });
  return new RolloutError('INTERNAL', typeof thrown === 'string' ? thrown : (JSON.stringify(thrown) ?? String(thrown)));
}

/** A failure record as stored in results: `{code, class, message}`. */
export function toFailure(thrown: unknown): {
  code: RolloutError['code'];
  class: RolloutError['class'];
  message: string;
} {
  const err = coerceError(thrown);
  return { code: err.code, class: err.class, message: err.message };
}
