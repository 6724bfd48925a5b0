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
