/** Thin JSON helpers over a conformance target (auth header added unless told otherwise). */
import { expect } from 'vitest';
import type { SwerexConformanceTarget, SwerexReply } from './target.js';

export interface CallOptions {
  /** `false` = send no X-API-Key; a string = send that key. Default: the target's token. */
  apiKey?: false | string;
  requestId?: string;
  method?: string;
}

export interface SwerexExceptionBody {
  message: string;
  class_path: string;
  traceback: string;
  extra_info: Record<string, unknown>;
}

export class RexCaller {
  constructor(private readonly target: SwerexConformanceTarget) {}

  async raw(path: string, body: unknown, options: CallOptions = {}): Promise<SwerexReply & { json: unknown }> {
    const headers: Record<string, string> = {};
    const key = options.apiKey === undefined ? this.target.authToken : options.apiKey;
    if (key !== false) headers['x-api-key'] = key;
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const reply = await this.target.send({
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      path,
      headers,
      body: payload,
    });
    let json: unknown = undefined;
    try {
      json = JSON.parse(reply.text);
    } catch {
      // not JSON; callers assert on `text`
    }
    return { ...reply, json };
  }

  /** Expects 200 and returns the parsed body. */
  async ok(path: string, body?: unknown, options?: CallOptions): Promise<Record<string, unknown>> {
    const reply = await this.raw(path, body, options);
    expect(reply.status, `${path} -> ${reply.text.slice(0, 500)}`).toBe(200);
    return reply.json as Record<string, unknown>;
  }

  /** Expects 511 and returns the `swerexception` object. */
  async fails(path: string, body?: unknown, options?: CallOptions): Promise<SwerexExceptionBody> {
    const reply = await this.raw(path, body, options);
    expect(reply.status, `${path} -> ${reply.text.slice(0, 500)}`).toBe(511);
    const exc = (reply.json as { swerexception: SwerexExceptionBody }).swerexception;
    expect(Object.keys(exc).sort()).toEqual(['class_path', 'extra_info', 'message', 'traceback']);
    expect(typeof exc.traceback).toBe('string');
    return exc;
  }

  createSession(session: string, extra: Record<string, unknown> = {}) {
    return this.ok('/create_session', {
      session,
      session_type: 'bash',
      startup_source: [],
      startup_timeout: 10,
      ...extra,
    });
  }

  run(session: string, command: string, extra: Record<string, unknown> = {}) {
    return this.ok('/run_in_session', { session, command, action_type: 'bash', ...extra });
  }

  runFails(session: string, command: string, extra: Record<string, unknown> = {}) {
    return this.fails('/run_in_session', { session, command, action_type: 'bash', ...extra });
  }

  interrupt(session: string, extra: Record<string, unknown> = {}) {
    return this.ok('/run_in_session', { session, action_type: 'bash_interrupt', ...extra });
  }

  closeSession(session: string) {
    return this.ok('/close_session', { session, session_type: 'bash' });
  }

  execute(command: string | string[], extra: Record<string, unknown> = {}) {
    return this.ok('/execute', { command, shell: typeof command === 'string', ...extra });
  }

  /** Runs a shell snippet with /execute and returns stdout (asserting exit 0). */
  async sh(script: string): Promise<string> {
    const result = await this.execute(script);
    expect(result.exit_code, `${script}: ${String(result.stderr)}`).toBe(0);
    return result.stdout as string;
  }
}
