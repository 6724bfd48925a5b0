import type { ExecShell } from './extract-patch.js';

/** What grading needs of a sandbox: run commands and write files (SWE-ReX `/execute`, `/write_file`). */
export interface GradingShell extends ExecShell {
  writeFile(path: string, content: string): Promise<void>;
}
