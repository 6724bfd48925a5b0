/**
 * Which sandboxes are interchangeable: the same image, start command, size, environment and installed tools.
 * Lifetime and startup timeout are left out (the holder extends the lifetime it needs). The key names a warm
 * pool and the lookahead's demand; it is a digest, so the environment's values never appear in Redis keys.
 */
import { createHash } from 'node:crypto';
import type { SandboxSpec, ToolName } from '../contracts/episode.js';

export function specKey(sandbox: SandboxSpec, tools: readonly ToolName[]): string {
  const canonical = JSON.stringify([
    sandbox.image,
    sandbox.command ?? null,
    sandbox.port,
    sandbox.cpu_milli,
    sandbox.memory_mb,
    Object.entries(sandbox.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    [...new Set(tools)].sort(),
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 24);
}
