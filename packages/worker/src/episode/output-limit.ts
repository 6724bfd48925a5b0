/**
 * Keeps a step's output whole up to a byte limit; beyond it keeps head and tail with the full size
 * noted in between, so both the command's start and its final lines (errors, summaries) survive.
 */
import { truncationMarker } from '@rollout-fleet/sandbox';

export interface KeptOutput {
  output: string;
  output_bytes: number;
  truncated: boolean;
}

/**
 * `originalBytes`: the true size when `output` was already cut while it was read (bounded-body.ts); the
 * record then reports that size, and head and tail come from the cut text (whose head and tail are the
 * original's, as long as the read limit is not below the step limit).
 */
export function keepOutput(output: string, limitBytes: number, originalBytes?: number): KeptOutput {
  const bytes = Buffer.byteLength(output, 'utf8');
  const total = originalBytes ?? bytes;
  if (bytes <= limitBytes) return { output, output_bytes: total, truncated: total !== bytes };
  const buffer = Buffer.from(output, 'utf8');
  const half = Math.floor(limitBytes / 2);
  // Decoding a cut multi-byte character yields U+FFFD at the edge, never invalid text.
  const head = buffer.subarray(0, half).toString('utf8');
  const tail = buffer.subarray(bytes - half).toString('utf8');
  const marker = truncationMarker(total, total - 2 * half);
  return { output: head + marker + tail, output_bytes: total, truncated: true };
}

/** Least a step keeps once the episode's budget is spent: enough for the marker and a little head and tail. */
export const MIN_KEPT_BYTES = 1024;

/**
 * What one episode's result keeps of its step outputs, so a long episode's result stays bounded however much
 * its steps print: each step keeps up to `perOutputBytes`, and the steps together up to `stepsBytes`; past it,
 * each later step keeps MIN_KEPT_BYTES (head + marker + tail). The eval log is not drawn from it: it keeps up to
 * `perOutputBytes` whatever the steps kept (RF_EPISODE_OUTPUT_LIMIT_BYTES − RF_STEP_OUTPUT_LIMIT_BYTES is what
 * the steps share).
 */
export interface OutputBudget {
  /** Bytes the next output may keep. */
  allowance(): number;
  /** Records what an output kept. */
  spend(bytes: number): void;
}

export function createOutputBudget(o: { perOutputBytes: number; stepsBytes: number }): OutputBudget {
  let left = Math.max(0, o.stepsBytes);
  return {
    allowance: () => Math.max(MIN_KEPT_BYTES, Math.min(o.perOutputBytes, left)),
    spend: (bytes) => {
      left = Math.max(0, left - bytes);
    },
  };
}
