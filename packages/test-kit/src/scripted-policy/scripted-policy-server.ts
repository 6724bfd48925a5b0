/**
 * A scripted OpenAI-compatible policy server: the stand-in for a GPU-served model in tests, the demo and the
 * benchmarks. Real HTTP on 127.0.0.1 (port 0 by default); it records every request it gets.
 *
 * Wire contract: `POST /v1/chat/completions` (non-streaming) → a chat completion in vLLM's shape (token ids at the
 * root and on the choice when `return_token_ids` is asked) or SGLang's (both on the choice), with usage and
 * logprobs from a toy tokenizer that agree with each other; errors in each server's envelope. `GET /v1/models`
 * lists the scripts. Optional `Authorization: Bearer <apiKey>` check (401).
 *
 * Which script answers: the request's `model` names it (or `route` decides). Which step of the script: the turn is
 * the number of assistant messages already in the request, and the attempt counts identical requests (a
 * retried turn sends the same messages again). A turn given as a list answers attempt 1 with the first entry,
 * attempt 2 with the second, and so on (the last repeats).
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { abortableDelay } from '@rollout-fleet/shared';
import { startWireServer, type WireServer } from '../wire-test-server.js';
import { toyCompletionTokens, toyLogprob, toyPromptIds, type ToyMessage } from './toy-tokenizer.js';

export type ScriptDialect = 'vllm' | 'sglang' | 'openai';

export interface ScriptedToolCall {
  name: string;
  /** A string is sent as it is (so malformed JSON can be scripted); an object is serialized. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export interface ScriptedReply {
  content?: string | null;
  tool_calls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are calls, else `stop`. */
  finish_reason?: string;
  reasoning_content?: string;
  /**
   * `consistent` (default): ids and logprobs as asked, agreeing with usage; `none`: leave them out;
   * `mismatch`: one completion id and one logprob fewer than usage says.
   */
  tokens?: 'consistent' | 'none' | 'mismatch';
  /** Answer after this long. */
  delay_ms?: number;
}

/** Error envelopes: current vLLM / OpenAI wrap in `error`; old vLLM and SGLang are flat. */
export type ErrorEnvelope = 'vllm' | 'vllm-old' | 'sglang' | 'openai';

export interface ScriptedError {
  status: number;
  message: string;
  param?: string;
  envelope?: ErrorEnvelope;
  /** Retry-After header, seconds. */
  retry_after?: number;
}

export type ScriptedAttempt =
  | { reply: ScriptedReply }
  | { error: ScriptedError }
  /** Never answers (until the client gives up or the server closes). */
  | { hang: true }
  /** Drops the TCP connection without an answer. */
  | { reset: true };

export interface ScriptContext {
  turn: number;
  attempt: number;
  /** The request body. */
  body: Record<string, unknown>;
}

export type ScriptedTurn = ScriptedAttempt | readonly ScriptedAttempt[] | ((context: ScriptContext) => ScriptedAttempt);

export interface PolicyScript {
  /** Response shape. @defaultValue 'vllm' */
  dialect?: ScriptDialect;
  turns: readonly ScriptedTurn[];
}

export interface RecordedPolicyRequest {
  index: number;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: Record<string, unknown> | undefined;
  script: string | undefined;
  turn: number;
  attempt: number;
  /** What the script did. */
  outcome: 'reply' | 'error' | 'hang' | 'reset' | 'unknown';
  /** The server's own time for this request (parsing, script, tokens, serialization), scripted delays excluded, ms. */
  handledMs: number;
  /** The client closed the connection before an answer was sent (it gave up on a hang or a delayed reply). */
  clientAborted: boolean;
}

export interface ScriptedPolicyServerOptions {
  scripts: Readonly<Record<string, PolicyScript>>;
  /** Picks the script of a request. @defaultValue the request's `model` */
  route?: (body: Record<string, unknown>) => string | undefined;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Served context length: a request whose prompt + max_completion_tokens exceeds it gets vLLM's overflow 400. */
  maxModelLen?: number;
}

export interface ScriptedPolicyServer {
  /** The API root to put in `policy.base_url` (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  requests: RecordedPolicyRequest[];
  /** Requests of one script, in arrival order. */
  requestsFor(script: string): RecordedPolicyRequest[];
  /** Chat-completion requests open right now (received, not yet answered or closed). */
  readonly inflight: number;
  /** The most chat-completion requests that were ever open at once. */
  readonly maxInflight: number;
  close(): Promise<void>;
}

/** The context-overflow answers of each server and era (policy-loop.md §2), ready to script. */
export const CONTEXT_OVERFLOW_ERRORS: Readonly<Record<string, ScriptedError>> = {
  'vllm-old': {
    status: 400,
    envelope: 'vllm-old',
    message:
      "This model's maximum context length is 4096 tokens. However, you requested 4100 tokens (3588 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
  },
  'vllm-0.10': {
    status: 400,
    envelope: 'vllm',
    message:
      "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is 4096 tokens and your request has 3700 input tokens (512 > 4096 - 3700).",
  },
  'vllm-renderer': {
    status: 400,
    envelope: 'vllm',
    param: 'input_tokens',
    message:
      "You passed 3700 input tokens and requested 512 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 3584 tokens. Please reduce the length of the input prompt.",
  },
  'vllm-current': {
    status: 400,
    envelope: 'vllm',
    message:
      "This model's maximum context length is 4096 tokens. However, you requested 512 output tokens and your prompt contains at least 3585 input tokens, for a total of at least 4097 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=3585)",
  },
  'sglang-input': {
    status: 400,
    envelope: 'sglang',
    message: "The input (4200 tokens) is longer than the model's context length (4096 tokens).",
  },
  'sglang-total': {
    status: 400,
    envelope: 'sglang',
    message:
      "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 4300 tokens: 3788 tokens from the input messages and 512 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
  },
  openai: {
    status: 400,
    envelope: 'openai',
    param: 'messages',
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
  },
};

function errorBody(error: ScriptedError): Record<string, unknown> {
  const type =
    error.status === 429
      ? 'RateLimitError'
      : error.status >= 500
        ? 'InternalServerError'
        : error.status === 404
          ? 'NotFoundError'
          : 'BadRequestError';
  switch (error.envelope ?? 'vllm') {
    case 'vllm':
      return { error: { message: error.message, type, param: error.param ?? null, code: error.status } };
    case 'openai':
      return {
        error: {
          message: error.message,
          type: 'invalid_request_error',
          param: error.param ?? null,
          code: error.status === 400 ? 'context_length_exceeded' : null,
        },
      };
    case 'vllm-old':
      return { object: 'error', message: error.message, type, param: error.param ?? null, code: error.status };
    case 'sglang':
      return { object: 'error', message: error.message, type, param: error.param ?? null, code: error.status };
  }
}

function pickAttempt(turn: ScriptedTurn, context: ScriptContext): ScriptedAttempt {
  if (typeof turn === 'function') return turn(context);
  if (Array.isArray(turn)) return turn[Math.min(context.attempt, turn.length) - 1] as ScriptedAttempt;
  return turn as ScriptedAttempt;
}

function countAssistantMessages(messages: unknown): number {
  return Array.isArray(messages)
    ? messages.filter((m) => typeof m === 'object' && m !== null && (m as { role?: unknown }).role === 'assistant')
        .length
    : 0;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function completion(
  reply: ScriptedReply,
  context: { body: Record<string, unknown>; dialect: ScriptDialect; turn: number; completionCounter: number },
): Record<string, unknown> {
  const { body, dialect } = context;
  const toolCalls = reply.tool_calls?.map((call, index) => ({
    id: call.id ?? `call_${context.turn}_${index}_${context.completionCounter}`,
    type: 'function',
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: reply.content ?? (toolCalls ? null : ''),
    tool_calls: toolCalls ?? [],
  };
  if (reply.reasoning_content !== undefined) message.reasoning_content = reply.reasoning_content;
  const promptIds = toyPromptIds((body.messages ?? []) as ToyMessage[], body.tools);
  const completionTokens = toyCompletionTokens({ content: message.content, tool_calls: toolCalls });
  const usage = {
    prompt_tokens: promptIds.length,
    completion_tokens: completionTokens.length,
    total_tokens: promptIds.length + completionTokens.length,
  };
  const mode = reply.tokens ?? 'consistent';
  const kept = mode === 'mismatch' ? completionTokens.slice(0, -1) : completionTokens;
  const choice: Record<string, unknown> = {
    index: 0,
    message,
    finish_reason: reply.finish_reason ?? (toolCalls && toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    logprobs: null,
  };
  const out: Record<string, unknown> = {
    id: `chatcmpl-scripted-${context.completionCounter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [choice],
    usage,
  };
  if (dialect === 'vllm') {
    choice.stop_reason = null;
    out.system_fingerprint = 'scripted-vllm';
  }
  if (mode !== 'none' && body.logprobs === true) {
    choice.logprobs = {
      content: kept.map((token, position) => ({
        token: token.text,
        logprob: toyLogprob(token, position),
        bytes: null,
        top_logprobs: [],
      })),
    };
  }
  if (mode !== 'none' && dialect !== 'openai' && body.return_token_ids === true) {
    choice.token_ids = kept.map((token) => token.id);
    if (dialect === 'vllm') out.prompt_token_ids = promptIds;
    else if (body.return_prompt_token_ids === true) choice.prompt_token_ids = promptIds;
  }
  return out;
}

export async function startScriptedPolicyServer(options: ScriptedPolicyServerOptions): Promise<ScriptedPolicyServer> {
  const requests: RecordedPolicyRequest[] = [];
  const attempts = new Map<string, number>();
  let completions = 0;
  let inflight = 0;
  let maxInflight = 0;
  let closing = false;
  const route =
    options.route ?? ((body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model : undefined));

  const wire: WireServer = await startWireServer(async (req, res) => {
    const started = performance.now();
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(req.body.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const record: RecordedPolicyRequest = {
      index: requests.length,
      path: req.url.pathname,
      headers: req.headers,
      body,
      script: undefined,
      turn: 0,
      attempt: 0,
      outcome: 'unknown',
      handledMs: 0,
      clientAborted: false,
    };
    requests.push(record);
    if (req.method === 'POST' && req.url.pathname === '/v1/chat/completions') {
      inflight += 1;
      maxInflight = Math.max(maxInflight, inflight);
      res.once('close', () => {
        inflight -= 1;
        // Closed without an answer, neither by a scripted reset nor by close(): the client went away.
        if (!res.writableFinished && record.outcome !== 'reset' && !closing) record.clientAborted = true;
      });
    }
    const finish = (): void => {
      record.handledMs = performance.now() - started;
    };
    if (req.method === 'GET' && req.url.pathname === '/v1/models') {
      send(res, 200, {
        object: 'list',
        data: Object.keys(options.scripts).map((id) => ({ id, object: 'model', owned_by: 'scripted' })),
      });
      return finish();
    }
    if (req.method !== 'POST' || req.url.pathname !== '/v1/chat/completions') {
      send(res, 404, {
        error: {
          message: `Not Found: ${req.method} ${req.url.pathname}`,
          type: 'NotFoundError',
          param: null,
          code: 404,
        },
      });
      return finish();
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      record.outcome = 'error';
      send(res, 401, { error: { message: 'Unauthorized', type: 'AuthenticationError', param: null, code: 401 } });
      return finish();
    }
    if (body === undefined) {
      record.outcome = 'error';
      send(res, 400, {
        error: { message: 'request body is not a JSON object', type: 'BadRequestError', param: null, code: 400 },
      });
      return finish();
    }
    const name = route(body);
    const script = name === undefined ? undefined : options.scripts[name];
    if (script === undefined || name === undefined) {
      record.outcome = 'error';
      send(res, 404, {
        error: {
          message: `The model \`${String(body.model)}\` does not exist.`,
          type: 'NotFoundError',
          param: 'model',
          code: 404,
        },
      });
      return finish();
    }
    const turn = countAssistantMessages(body.messages);
    const key = createHash('sha256')
      .update(name)
      .update('\0')
      .update(JSON.stringify(body.messages ?? null))
      .digest('hex');
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    Object.assign(record, { script: name, turn, attempt });
    const scripted = script.turns[turn];
    if (scripted === undefined) {
      record.outcome = 'error';
      send(res, 400, {
        error: {
          message: `script "${name}" has no turn ${turn} (it has ${script.turns.length})`,
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      });
      return finish();
    }
    const chosen = pickAttempt(scripted, { turn, attempt, body });
    if ('hang' in chosen) {
      record.outcome = 'hang';
      return finish();
    }
    if ('reset' in chosen) {
      record.outcome = 'reset';
      res.socket?.destroy();
      return finish();
    }
    if ('error' in chosen) {
      record.outcome = 'error';
      const headers: Record<string, string> =
        chosen.error.retry_after === undefined ? {} : { 'retry-after': String(chosen.error.retry_after) };
      send(res, chosen.error.status, errorBody(chosen.error), headers);
      return finish();
    }
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 0);
    const promptLen = toyPromptIds((body.messages ?? []) as ToyMessage[], body.tools).length;
    if (options.maxModelLen !== undefined && promptLen + maxTokens > options.maxModelLen) {
      record.outcome = 'error';
      const overflow = CONTEXT_OVERFLOW_ERRORS['vllm-renderer']!;
      send(
        res,
        400,
        errorBody({
          ...overflow,
          message: `You passed ${promptLen} input tokens and requested ${maxTokens} output tokens. However, the model's context length is only ${options.maxModelLen} tokens, resulting in a maximum input length of ${options.maxModelLen - maxTokens} tokens. Please reduce the length of the input prompt.`,
        }),
      );
      return finish();
    }
    record.outcome = 'reply';
    completions += 1;
    const answer = completion(chosen.reply, {
      body,
      dialect: script.dialect ?? 'vllm',
      turn,
      completionCounter: completions,
    });
    finish();
    const delay = chosen.reply.delay_ms ?? 0;
    if (delay > 0) await abortableDelay(delay);
    send(res, 200, answer);
  });

  return {
    baseUrl: `${wire.url}/v1`,
    requests,
    requestsFor: (script) => requests.filter((request) => request.script === script),
    get inflight() {
      return inflight;
    },
    get maxInflight() {
      return maxInflight;
    },
    close: () => {
      closing = true;
      return wire.close();
    },
  };
}
