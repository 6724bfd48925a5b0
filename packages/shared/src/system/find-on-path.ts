/** Where a program is on PATH (as a shell would find it), so nothing depends on one machine's install layout. */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The absolute path of the executable `command` on `path` (default PATH), or undefined. */
export function findOnPath(command: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
}
