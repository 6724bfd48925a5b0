/**
 * Keeps a step's output whole up to a byte limit; beyond it keeps head and tail with the full size
 * noted in between, so both the command's start and its final lines (errors, summaries) survive.
 */
export interface KeptOutput {
  output: string;
  output_bytes: number;
  truncated: boolean;
}

export function keepOutput(output: string, limitBytes: number): KeptOutput {
  const bytes = Buffer.byteLength(output, 'utf8');
  if (bytes <= limitBytes) return { output, output_bytes: bytes, truncated: false };
  const buffer = Buffer.from(output, 'utf8');
  const half = Math.floor(limitBytes / 2);
  // Decoding a cut multi-byte character yields U+FFFD at the edge, never invalid text.
  const head = buffer.subarray(0, half).toString('utf8');
  const tail = buffer.subarray(bytes - half).toString('utf8');
  const marker = `\n[... output truncated: ${bytes} bytes in total, ${bytes - 2 * half} bytes omitted ...]\n`;
  return { output: head + marker + tail, output_bytes: bytes, truncated: true };
}
