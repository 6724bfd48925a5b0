import type { Logger } from '../logging/create-logger.js';

/** Runs `task` every `intervalMs` (never overlapping itself); returns the stopper. */
export function repeatEvery(
  intervalMs: number,
  task: () => Promise<unknown>,
  logger: Logger,
  failure: string,
): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    task()
      .catch((err: unknown) => logger.warn({ err }, failure))
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
