/**
 * Wire contract: SWE-ReX 1.4 HTTP API (swerex-protocol.md §2–§5), answered in-process without a shell.
 *   GET / · GET /is_alive · POST /create_session /run_in_session /close_session /execute /read_file
 *   /write_file /upload /close; X-API-Key on every path (401); X-Request-ID single-slot replay;
 *   404/405/422 FastAPI shapes; runtime errors as 511 {"swerexception":{message,class_path,traceback,extra_info}}.
 * Commands are not run: `echo ARGS` prints ARGS, `printf FORMAT ARGS` in a session fills `%s` and `\n` (`$?` is 0), `sleep N`
 * (alone) waits N seconds, everything else prints nothing and exits 0. Files live in a map. Meant for fleet-scale benchmarks of the control plane and gateway
 * (and tests that need an episode to take time), not for grading.
 */
import { abortableDelay } from '@rollout-fleet/shared';
import type { InlineRequest, InlineResponse } from '../backends/backend.js';
import { pyRepr } from './py-repr.js';

interface Reply {
  status: number;
  body: unknown;
}

class SwerexFailure extends Error {
  constructor(
    readonly classPath: string,
    message: string,
  ) {
    super(message);
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const STORED_STATUSES = new Set([200, 404, 405, 422]);

export class EmulatedSwerex {
  private readonly sessions = new Map<string, { open: boolean }>();
  private readonly files = new Map<string, string>();
  private lastRequest: { id: string; response: InlineResponse } | null = null;
  private alive = true;
  /** Ends the `sleep N` waits of a stopped instance, so a closed host keeps no timers (and its process can exit). */
  private readonly stopped = new AbortController();

  constructor(private readonly authToken: string) {}

  /** After `stop()` the instance refuses everything (the gateway treats it as dead before that anyway). */
  stop(): void {
    this.alive = false;
    this.stopped.abort(new Error('instance is gone'));
  }

  async handle(request: InlineRequest): Promise<InlineResponse> {
    if (!this.alive) throw new Error('instance is gone');
    const requestId = header(request, 'x-request-id');
    if (requestId !== undefined && this.lastRequest?.id === requestId) return this.lastRequest.response;
    const authFailure = this.checkAuth(request);
    if (authFailure) return toResponse(authFailure);
    const seconds = sleepSeconds(request);
    if (seconds > 0) await abortableDelay(seconds * 1000, this.stopped.signal);
    if (!this.alive) throw new Error('instance is gone');
    let reply: Reply;
    try {
      reply = this.route(request);
    } catch (err) {
      if (!(err instanceof SwerexFailure)) throw err;
      return toResponse(swerexception(err));
    }
    const response = toResponse(reply);
    if (requestId !== undefined && STORED_STATUSES.has(reply.status)) this.lastRequest = { id: requestId, response };
    return response;
  }

  private checkAuth(request: InlineRequest): Reply | null {
    if (this.authToken === '') return null;
    const key = header(request, 'x-api-key');
    if (key === undefined) return { status: 401, body: { detail: 'Not authenticated' } };
    if (key !== this.authToken) return { status: 401, body: { detail: 'Invalid API Key' } };
    return null;
  }

  private route(request: InlineRequest): Reply {
    const path = request.path.split('?')[0] ?? '/';
    const getPaths = new Set(['/', '/is_alive']);
    const postPaths = new Set([
      '/create_session',
      '/run_in_session',
      '/close_session',
      '/execute',
      '/read_file',
      '/write_file',
      '/upload',
      '/close',
    ]);
    if (getPaths.has(path) && request.method !== 'GET') return { status: 405, body: { detail: 'Method Not Allowed' } };
    if (postPaths.has(path) && request.method !== 'POST')
      return { status: 405, body: { detail: 'Method Not Allowed' } };
    if (path === '/') return ok({ message: 'hello world' });
    if (path === '/is_alive') return ok({ is_alive: true, message: '' });
    if (path === '/upload' || path === '/close') {
      if (path === '/close') for (const session of this.sessions.values()) session.open = false;
      return ok({});
    }
    if (!postPaths.has(path)) return { status: 404, body: { detail: 'Not Found' } };
    const parsed = parseJson(request.body);
    if (!parsed.ok) return parsed.reply;
    const body = parsed.value;
    switch (path) {
      case '/create_session':
        return this.createSession(body);
      case '/run_in_session':
        return this.runInSession(body);
      case '/close_session':
        return this.closeSession(body);
      case '/execute':
        return this.execute(body);
      case '/read_file':
        return this.readFile(body);
      default:
        return this.writeFile(body);
    }
  }

  private createSession(body: Record<string, unknown>): Reply {
    const tag = requireTag(body, 'session_type', ['bash']);
    if (tag) return tag;
    const name = stringField(body, 'session', 'default');
    if (this.sessions.has(name)) {
      throw new SwerexFailure('swerex.exceptions.SessionExistsError', `session ${name} already exists`);
    }
    this.sessions.set(name, { open: true });
    return ok({ output: '', session_type: 'bash' });
  }

  private runInSession(body: Record<string, unknown>): Reply {
    const tag = requireTag(body, 'action_type', ['bash', 'bash_interrupt']);
    if (tag) return tag;
    const name = stringField(body, 'session', 'default');
    if (!this.sessions.has(name)) {
      throw new SwerexFailure('swerex.exceptions.SessionDoesNotExistError', `session ${pyRepr(name)} does not exist`);
    }
    const observation = {
      output: '',
      exit_code: 0 as number | null,
      failure_reason: '',
      expect_string: 'SHELLPS1PREFIX',
      session_type: 'bash',
    };
    if (body['action_type'] === 'bash_interrupt') return ok(observation);
    if (typeof body['command'] !== 'string') return missingField('command', body);
    observation.output = echoOutput(body['command'], { printf: true });
    if (body['check'] === 'ignore') observation.exit_code = null;
    return ok(observation);
  }

  private closeSession(body: Record<string, unknown>): Reply {
    const tag = requireTag(body, 'session_type', ['bash']);
    if (tag) return tag;
    const name = stringField(body, 'session', 'default');
    if (!this.sessions.has(name)) {
      throw new SwerexFailure('swerex.exceptions.SessionDoesNotExistError', `session ${pyRepr(name)} does not exist`);
    }
    this.sessions.delete(name);
    return ok({ session_type: 'bash' });
  }

  private execute(body: Record<string, unknown>): Reply {
    const command = body['command'];
    if (typeof command !== 'string' && !Array.isArray(command)) return missingField('command', body);
    const text = Array.isArray(command) ? command.map(String).join(' ') : command;
    const stdout = echoOutput(text);
    return ok({ stdout, stderr: '', exit_code: 0 });
  }

  private readFile(body: Record<string, unknown>): Reply {
    if (typeof body['path'] !== 'string') return missingField('path', body);
    const content = this.files.get(body['path']);
    if (content === undefined) {
      throw new SwerexFailure(
        'builtins.FileNotFoundError',
        `[Errno 2] No such file or directory: ${pyRepr(body['path'])}`,
      );
    }
    return ok({ content });
  }

  private writeFile(body: Record<string, unknown>): Reply {
    if (typeof body['path'] !== 'string') return missingField('path', body);
    if (typeof body['content'] !== 'string') return missingField('content', body);
    this.files.set(body['path'], body['content']);
    return ok({});
  }
}

/** A `run_in_session` whose command is exactly `sleep N` (seconds, ≤ 1 hour); 0 otherwise. */
function sleepSeconds(request: InlineRequest): number {
  if (!request.path.startsWith('/run_in_session')) return 0;
  const parsed = parseJson(request.body);
  const command = parsed.ok ? parsed.value['command'] : undefined;
  const match = typeof command === 'string' ? /^\s*sleep\s+(\d+(?:\.\d+)?)\s*$/.exec(command) : null;
  return match ? Math.min(3600, Number(match[1])) : 0;
}

/**
 * `echo a b` → "a b\n"; in sessions also `printf 'x_%s\n' a "$?"` → "x_a\n" (our set-up markers, session-setup.ts;
 * `/execute` scripts keep printing nothing, so the repository probe finds no repository); several lines or
 * `;`-joined commands concatenate; anything else prints nothing.
 */
function echoOutput(command: string, o: { printf?: boolean } = {}): string {
  let out = '';
  for (const part of command.split(/\n|;|&&/)) {
    const match = /^\s*echo(?:\s+(.*?))?\s*$/.exec(part);
    if (match) out += unquote(match[1] ?? '') + '\n';
    const printf = /^\s*printf\s+(.*?)\s*$/.exec(part);
    if (printf && o.printf) out += printfOutput(printf[1] ?? '');
  }
  return out;
}

function printfOutput(argText: string): string {
  const [format = '', ...args] = (argText.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((arg) =>
    unquote(arg).replaceAll('$?', '0'),
  );
  return format.replace(/%s/g, () => args.shift() ?? '').replaceAll('\\n', '\n');
}

function unquote(text: string): string {
  return text.replace(
    /'([^']*)'|"([^"]*)"/g,
    (_all, single: string | undefined, double: string | undefined) => single ?? double ?? '',
  );
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function header(request: InlineRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function stringField(body: Record<string, unknown>, name: string, fallback: string): string {
  const value = body[name];
  return typeof value === 'string' ? value : fallback;
}

function parseJson(raw: Buffer): { ok: true; value: Record<string, unknown> } | { ok: false; reply: Reply } {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return { ok: true, value: value as Record<string, unknown> };
  } catch {
    // fall through to the validation error below
  }
  return {
    ok: false,
    reply: {
      status: 422,
      body: {
        detail: [
          {
            type: 'model_attributes_type',
            loc: ['body'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
            input: raw.toString('utf8'),
          },
        ],
      },
    },
  };
}

function requireTag(body: Record<string, unknown>, field: string, allowed: string[]): Reply | null {
  const value = body[field];
  if (typeof value === 'string' && allowed.includes(value)) return null;
  if (value === undefined) {
    return {
      status: 422,
      body: {
        detail: [
          {
            type: 'union_tag_not_found',
            loc: ['body'],
            msg: `Unable to extract tag using discriminator '${field}'`,
            input: body,
            ctx: { discriminator: `'${field}'` },
          },
        ],
      },
    };
  }
  return {
    status: 422,
    body: {
      detail: [
        {
          type: 'union_tag_invalid',
          loc: ['body'],
          msg: `Input tag '${String(value)}' found using '${field}' does not match any of the expected tags: ${allowed.map((a) => `'${a}'`).join(', ')}`,
          input: body,
          ctx: {
            discriminator: `'${field}'`,
            tag: String(value),
            expected_tags: allowed.map((a) => `'${a}'`).join(', '),
          },
        },
      ],
    },
  };
}

function missingField(field: string, body: Record<string, unknown>): Reply {
  return {
    status: 422,
    body: { detail: [{ type: 'missing', loc: ['body', field], msg: 'Field required', input: body }] },
  };
}

function swerexception(err: SwerexFailure): Reply {
  return {
    status: 511,
    body: {
      swerexception: {
        message: err.message,
        class_path: err.classPath,
        traceback: `Traceback (most recent call last):\n  (emulated sandbox)\n${err.classPath}: ${err.message}\n`,
        extra_info: {},
      },
    },
  };
}

function toResponse(reply: Reply): InlineResponse {
  return { status: reply.status, headers: { ...JSON_HEADERS }, body: Buffer.from(JSON.stringify(reply.body)) };
}
