import { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { RolloutError } from '../errors/rollout-error.js';
import type { LogFormat, LogLevel } from './levels.js';
import { REDACTED, REDACT_PATHS, redactDeep, redactSecrets } from './redact.js';
import { MIN_SCRUBBED_LENGTH } from './redact-job-data.js';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  /** @defaultValue 'info' */
  level?: LogLevel;
  /** `auto` is pretty when the destination is a TTY. @defaultValue 'auto' */
  format?: LogFormat;
  /** Where lines go. @defaultValue process.stdout */
  destination?: DestinationStream;
  /**
   * Known secret values (keys, tokens, passwords from the config) cut out of every line, message
   * text included. Unset entries are ignored, so `config.vefaas.gatewayKey` can be passed as is.
   */
  secrets?: readonly (string | undefined)[];
  /** Logger name, shown as `name`. */
  name?: string;
}

/** Standard error serialisation plus what RolloutError decides from its code, then the key scrub. */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return redactDeep(error);
  const serialized: Record<string, unknown> = { ...pino.stdSerializers.err(error) };
  if (error instanceof RolloutError) {
    serialized.class = error.class;
    serialized.retryable = error.retryable;
  }
  return redactDeep(serialized);
}

/** Secret values learnt while the process runs (a job's sandbox env), counted: two jobs may share one. */
class LiveSecrets {
  readonly #counts = new Map<string, number>();
  #values: string[] = [];

  add(values: readonly string[]): () => void {
    for (const value of values) this.#counts.set(value, (this.#counts.get(value) ?? 0) + 1);
    this.#values = [...this.#counts.keys()];
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const value of values) {
        const left = (this.#counts.get(value) ?? 1) - 1;
        if (left > 0) this.#counts.set(value, left);
        else this.#counts.delete(value);
      }
      this.#values = [...this.#counts.keys()];
    };
  }

  get values(): readonly string[] {
    return this.#values;
  }
}

/** The live secrets of each logger tree, found through the destination stream every child shares. */
const liveSecretsByStream = new WeakMap<object, LiveSecrets>();

function scrubbingStream(target: DestinationStream, secrets: readonly string[], live: LiveSecrets): DestinationStream {
  return {
    write: (line: string) => {
      const all = live.values.length === 0 ? secrets : [...secrets, ...live.values];
      target.write(all.length === 0 ? line : redactSecrets(line, all));
    },
  };
}

/**
 * Cuts `values` (a job's sandbox env values, say: `jobSecrets(job.data)`) out of every line the logger — and
 * every other logger of its tree, whichever module writes — prints until the returned release is called.
 * Values shorter than MIN_SCRUBBED_LENGTH are left alone ("1" or "true" would shred every line). A logger not
 * made by createLogger is left as it is.
 */
export function scrubFromLogs(logger: Logger, values: readonly string[]): () => void {
  const live = liveSecretsByStream.get((logger as unknown as Record<symbol, object>)[pino.symbols.streamSym] ?? {});
  const long = values.filter((value) => value.length >= MIN_SCRUBBED_LENGTH);
  if (live === undefined || long.length === 0) return () => undefined;
  return live.add(long);
}

/** pino-pretty listens for events on its destination; a bare `{ write }` destination gets a Writable around it. */
function asWritable(target: DestinationStream): DestinationStream {
  if ('on' in target && typeof target.on === 'function') return target;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      target.write(chunk.toString());
      callback();
    },
  });
}

/**
 * The one root logger, made in `main` from `config.log`. Bind per-episode context with
 * `childLogger` (or `logger.child`). Errors go under `err`: `logger.error({ err }, 'what failed')`.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const { level = 'info', format = 'auto', destination, name } = options;
  const secrets = (options.secrets ?? []).filter((s): s is string => s !== undefined && s !== '');
  const target: DestinationStream & { isTTY?: boolean } = destination ?? process.stdout;
  const isTTY = target.isTTY === true;
  const usePretty = format === 'pretty' || (format === 'auto' && isTTY);

  const output = usePretty
    ? pretty({
        destination: asWritable(target),
        colorize: isTTY,
        sync: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
      })
    : target;
  // Scrubbed while still JSON, so escaped forms of a secret are caught before pretty-printing unescapes them.
  const live = new LiveSecrets();
  const stream = scrubbingStream(output, secrets, live);
  liveSecretsByStream.set(stream, live);

  return pino(
    {
      level,
      name,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: { err: serializeError },
      formatters: { log: (record) => redactDeep(record), bindings: (bindings) => redactDeep(bindings) },
    },
    stream,
  );
}

/** Context carried by every line of one episode attempt. */
export interface LogContext {
  runId?: string;
  episodeId?: string;
  sampleIndex?: number;
  sandboxId?: string;
  workerId?: string;
  jobId?: string;
  attempt?: number;
  [key: string]: unknown;
}

/** `base.child(context)` without the unset fields, so lines never carry `"sandboxId": undefined` noise. */
export function childLogger(base: Logger, context: LogContext): Logger {
  const bindings = Object.fromEntries(Object.entries(context).filter(([, value]) => value !== undefined));
  return base.child(bindings);
}
