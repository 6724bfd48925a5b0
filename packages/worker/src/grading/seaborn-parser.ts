/** seaborn log parser after SWE-bench v4.1.0 `parse_log_seaborn`. */
import type { StatusEntries } from './pytest-parsers.js';
import { pySplit } from './py-text.js';

export function parseSeaborn(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const line of log.split('\n')) {
    const tokens = pySplit(line);
    if (line.startsWith('FAILED')) {
      // The harness raises IndexError on a bare `FAILED` line; skipping it is the only sane reading.
      if (tokens[1] !== undefined) statuses.set(tokens[1], 'FAILED');
    } else if (line.includes(' PASSED ')) {
      if (tokens[1] === 'PASSED' && tokens[0] !== undefined) statuses.set(tokens[0], 'PASSED');
    } else if (line.startsWith('PASSED')) {
      if (tokens[1] !== undefined) statuses.set(tokens[1], 'PASSED');
    }
  }
  return statuses;
}
