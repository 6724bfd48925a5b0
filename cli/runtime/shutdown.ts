/**
 * How a serving subcommand (api, worker, dashboard) stops: it waits for SIGINT or SIGTERM, closes what it
 * started in the order given, and returns its exit code.
 */
import type { Logger } from '@rollout-fleet/shared';
import { closeSharedDispatchers } from '@rollout-fleet/sandbox';
import { EXIT } from '../exit-codes.js';

const LEAKED_HANDLES_EXIT_MS = 5000;

export interface StopSignalOptions {
  /** Logged with the signal when the first one arrives. */
  message: string;
  /**
   * With it, the same signal sent again exits at once (EXIT.FAILURE), logging this. Without it, the first
   * signal removes our handlers, so a second one gets Node's default.
   */
  forceMessage?: string;
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilStopSignal(logger: Logger, options: StopSignalOptions): Promise<void> {
  const { forceMessage } = options;
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      if (forceMessage === undefined) {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      logger.info({ signal }, options.message);
      if (forceMessage !== undefined) {
        process.once(signal, () => {
          logger.error(forceMessage);
          process.exit(EXIT.FAILURE);
        });
      }
      resolve();
    };
    if (forceMessage === undefined) {
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    } else {
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    }
  });
}

export interface ServeUntilStoppedOptions extends StopSignalOptions {
  /** Closed one after the other, in this order, once a signal has come. */
  close: ReadonlyArray<() => Promise<unknown> | undefined>;
}

/** Waits for a stop signal, closes everything (then the shared HTTP dispatchers) and returns EXIT.OK. */
export async function serveUntilStopped(logger: Logger, options: ServeUntilStoppedOptions): Promise<number> {
  await untilStopSignal(logger, options);
  for (const close of options.close) await close();
  await closeSharedDispatchers();
  // Everything is closed; a handle still open here is a leak, and must not keep the process alive.
  setTimeout(() => {
    logger.warn('exiting with handles still open after shutdown');
    process.exit(EXIT.OK);
  }, LEAKED_HANDLES_EXIT_MS).unref();
  return EXIT.OK;
}
