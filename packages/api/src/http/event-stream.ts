/**
 * Writes a stream of cursor-tagged items to one HTTP response, as NDJSON or as Server-Sent Events (see
 * contracts/stream-contracts.ts for the wire format). Respects back-pressure (waits for `drain`), sends a
 * keep-alive while idle so proxies keep the connection, and aborts `signal` when the client goes away so the
 * Redis reader behind it stops.
 */
import { once } from 'node:events';
import type { Request, Response } from 'express';
import type { StreamEnd } from '../contracts/stream-contracts.js';

export type StreamFormat = 'ndjson' | 'sse';

export const NDJSON_TYPE = 'application/x-ndjson';
export const SSE_TYPE = 'text/event-stream';

/** SSE when the client asks for it (Accept: text/event-stream, or `?format=sse`); NDJSON otherwise. */
export function streamFormatOf(req: Request): StreamFormat {
  if (req.query.format === 'sse') return 'sse';
  if (req.query.format === 'ndjson') return 'ndjson';
  return (req.headers.accept ?? '').includes(SSE_TYPE) ? 'sse' : 'ndjson';
}

export interface EventWriter {
  /** Aborted when the client disconnects (or the stream ended). */
  readonly signal: AbortSignal;
  /** Writes one item; resolves once the socket can take more. */
  item(cursor: string, kind: 'result' | 'group', data: unknown): Promise<void>;
  /** Writes the end marker and finishes the response. */
  end(end: StreamEnd): void;
}

export function openEventStream(
  req: Request,
  res: Response,
  options: { format: StreamFormat; keepAliveMs: number },
): EventWriter {
  const { format } = options;
  const controller = new AbortController();
  res.status(200);
  res.setHeader('Content-Type', `${format === 'sse' ? SSE_TYPE : NDJSON_TYPE}; charset=utf-8`);
  res.setHeader('Cache-Control', 'no-store');
  // Reverse proxies (nginx) would otherwise buffer the stream.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const stop = (): void => {
    clearInterval(keepAlive);
    controller.abort();
  };
  res.once('close', stop);
  req.socket.setNoDelay(true);
  const keepAlive = setInterval(() => {
    if (!res.writableEnded) res.write(format === 'sse' ? ': keep-alive\n\n' : '\n');
  }, options.keepAliveMs);
  keepAlive.unref();

  const write = async (text: string): Promise<void> => {
    if (controller.signal.aborted || res.writableEnded) return;
    if (!res.write(text)) await Promise.race([once(res, 'drain'), once(controller.signal, 'abort')]);
  };
  return {
    signal: controller.signal,
    item: (cursor, kind, data) =>
      write(
        format === 'sse'
          ? `id: ${cursor}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`
          : `${JSON.stringify({ cursor, [kind]: data })}\n`,
      ),
    end: (end) => {
      if (res.writableEnded || controller.signal.aborted) return;
      res.end(format === 'sse' ? `event: end\ndata: ${JSON.stringify(end)}\n\n` : `${JSON.stringify({ end })}\n`);
      stop();
    },
  };
}
