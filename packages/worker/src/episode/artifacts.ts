/**
 * RF_ARTIFACTS_DIR: a result's whole logs and patch as files, for what the result keeps only up to its limits
 * (docs/grading.md). One directory per attempt that commits, `<root>/<run>/<episode>/<sample>/attempt-<n>-<id>/`
 * (the id keeps a straggler's backup and a re-run from writing into each other's files):
 * `eval.log` (the whole eval log), `patch.diff`, `eval.sh`, `steps/<index>.txt` (each whole step output). The
 * texts arrive masked (the episode's secrets read `***`, as in the result). A failed write is the caller's to log:
 * the files are a copy, the result stands without them.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResultArtifacts } from '@rollout-fleet/shared';

export interface ArtifactsInput {
  root: string;
  runId: string;
  episodeId: string;
  sampleIndex: number;
  attempt: number;
  evalLog?: string | undefined;
  patch?: string | null | undefined;
  evalScript?: string | undefined;
  /** Whole step outputs by step index (absent: not kept). */
  steps: ReadonlyArray<string | undefined>;
}

/** One path segment from an id (ids may hold `/`, and `.` or `..` alone): never leaves its parent. */
export function pathSegment(id: string): string {
  const encoded = id.replaceAll('%', '%25').replaceAll('/', '%2F');
  return /^\.+$/.test(encoded) ? encoded.replaceAll('.', '%2E') : encoded;
}

export async function writeArtifacts(input: ArtifactsInput): Promise<ResultArtifacts> {
  const path = [
    pathSegment(input.runId),
    pathSegment(input.episodeId),
    String(input.sampleIndex),
    `attempt-${input.attempt}-${randomBytes(3).toString('hex')}`,
  ].join('/');
  const dir = join(input.root, path);
  const files = new Map<string, string>();
  if (input.evalLog !== undefined) files.set('eval.log', input.evalLog);
  if (input.patch !== undefined && input.patch !== null) files.set('patch.diff', input.patch);
  if (input.evalScript !== undefined) files.set('eval.sh', input.evalScript);
  input.steps.forEach((output, index) => {
    if (output !== undefined) files.set(`steps/${index}.txt`, output);
  });
  await mkdir(join(dir, 'steps'), { recursive: true });
  for (const [name, content] of files) await writeFile(join(dir, name), content);
  return { root: input.root, path, files: [...files.keys()] };
}
