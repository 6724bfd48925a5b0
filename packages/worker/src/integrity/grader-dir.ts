/**
 * The grader's own Python modules (packages/worker/grader/: the result channel's pytest plugin and unittest
 * hook), read once from beside the sources and uploaded into every grading sandbox outside the repository.
 */
import { readFileSync } from 'node:fs';

const NAMES = ['rf_result_channel.py', 'sitecustomize.py'] as const;

let files: ReadonlyArray<{ name: string; content: string }> | undefined;

/** The modules, by file name, as the grading sandbox gets them. */
export function graderFiles(): ReadonlyArray<{ name: string; content: string }> {
  files ??= NAMES.map((name) => ({
    name,
    content: readFileSync(new URL(`../../grader/${name}`, import.meta.url), 'utf8'),
  }));
  return files;
}

/** The grader directory on the host (tests run the modules from here). */
export const GRADER_DIR_URL = new URL('../../grader/', import.meta.url);
