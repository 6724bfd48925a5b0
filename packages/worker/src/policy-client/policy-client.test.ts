/**
 * The policy client against the scripted OpenAI-compatible server over real HTTP: what goes on the wire, how each
 * failure is classed (one table), and that captured token ids and logprobs are the server's and agree with usage.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTEXT_OVERFLOW_ERRORS,
  startScriptedPolicyServer,
  type ScriptedPolicyServer,
} from '@rollout-fleet/test-kit/scripted-policy';
import { EpisodeSchema, coerceError } from '@rollout-fleet/shared';
import type { Policy } from '@rollout-fleet/shared';
import { toolProfile } from '../policy/tool-profiles.js';
import { buildChatRequest } from './chat-request.js';
import { PolicyClient } from './policy-client.js';
import { captureTokens } from './token-capture.js';

const KEY = 'sk-scripted-secret-0123456789';
const FIX = { name: 'bash', arguments: { command: 'ls /testbed' } };

function policyFor(baseUrl: string, model: string, overrides: Partial<Record<string, unknown>> = {}): Policy {
  return EpisodeSchema.parse({
    run_id: 'r',
    episode_id: 'e',
    instance_id: 'i',
    sandbox: { image: 'x' },
    problem_statement: 'p',
    policy: {
      base_url: baseUrl,
      model,
      api_key_env: 'POLICY_API_KEY',
      sampling: { temperature: 0.6, top_p: 0.95, max_completion_tokens: 256, seed: 7 },
      ...overrides,
    },
  }).policy!;
}

const MESSAGES = [
  { role: 'system' as const, content: 'You fix bugs.' },
  { role: 'user' as const, content: 'Fix add().' },
];

describe('PolicyClient against the scripted server', () => {
  let server: ScriptedPolicyServer;

  beforeAll(async () => {
    const overflowScripts = Object.fromEntries(
      Object.entries(CONTEXT_OVERFLOW_ERRORS).map(([name, error]) => [`overflow-${name}`, { turns: [{ error }] }]),
    );
    server = await startScriptedPolicyServer({
      apiKey: KEY,
      scripts: {
        ok: { turns: [{ reply: { content: 'Looking.', tool_calls: [FIX] } }] },
        'ok-sglang': { dialect: 'sglang', turns: [{ reply: { tool_calls: [FIX] } }] },
        'ok-openai': { dialect: 'openai', turns: [{ reply: { tool_calls: [FIX] } }] },
        mismatch: { turns: [{ reply: { tool_calls: [FIX], tokens: 'mismatch' } }] },
        none: { turns: [{ reply: { tool_calls: [FIX], tokens: 'none' } }] },
        throttled: { turns: [{ error: { status: 429, message: 'Too many requests', retry_after: 2 } }] },
        e500: { turns: [{ error: { status: 500, message: 'CUDA error: an illegal memory access was encountered' } }] },
        e503: { turns: [{ error: { status: 503, message: 'Service Unavailable' } }] },
        parser: {
          turns: [
            {
              error: {
                status: 400,
                message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
              },
            },
          ],
        },
        hang: { turns: [{ hang: true }] },
        reset: { turns: [{ reset: true }] },
        engine: { turns: [{ reply: { content: 'x', finish_reason: 'error' } }] },
        ...overflowScripts,
      },
    });
  });

  afterAll(async () => {
    await server.close();
  });

  const client = (): PolicyClient => new PolicyClient({ baseUrl: server.baseUrl, apiKey: KEY });
  const call = (model: string, overrides: Partial<Record<string, unknown>> = {}, timeoutMs = 10_000) => {
    const policy = policyFor(server.baseUrl, model, overrides);
    const body = buildChatRequest({
      policy,
      messages: MESSAGES,
      tools: toolProfile(policy.tool_profile).tools,
      parallelToolCalls: false,
      maxCompletionTokens: 200,
    });
    return client().complete({ body, timeoutMs, fallbackToolCallId: (i) => `fallback-${i}` });
  };
  const failureOf = async (promise: Promise<unknown>) => {
    const err = coerceError(
      await promise.then(
        () => undefined,
        (thrown: unknown) => thrown,
      ),
    );
    return { code: err.code, class: err.class, retryable: err.retryable, message: err.message, details: err.details };
  };

  it('sends the tools, every sampling parameter, the capture flags and the key; reads the reply and its token ids', async () => {
    const { completion, latencyMs } = await call('ok');
    const request = server.requestsFor('ok').at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body).toMatchObject({
      model: 'ok',
      messages: MESSAGES,
      tools: toolProfile('sweagent').tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      stream: false,
      temperature: 0.6,
      top_p: 0.95,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      seed: 7,
      max_completion_tokens: 200,
      logprobs: true,
      return_token_ids: true,
    });
    expect((request.body?.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual([
      'bash',
      'str_replace_editor',
      'submit',
    ]);
    expect(latencyMs).toBeGreaterThan(0);
    expect(completion.message).toMatchObject({ role: 'assistant', content: 'Looking.' });
    expect(completion.message.tool_calls?.[0]?.function).toEqual({
      name: 'bash',
      arguments: JSON.stringify(FIX.arguments),
    });
    expect(completion.finishReason).toBe('tool_calls');
    const captured = captureTokens({ ...completion, want: { tokenIds: true, logprobs: true } });
    expect(captured.problems).toEqual([]);
    expect(captured.promptIds).toHaveLength(completion.usage!.prompt_tokens);
    expect(captured.completionIds).toHaveLength(completion.usage!.completion_tokens);
    expect(captured.logprobs).toHaveLength(completion.usage!.completion_tokens);
  });

  it('finds SGLang token ids on the choice, and sends OpenAI no vLLM-only fields', async () => {
    const { completion } = await call('ok-sglang', { server_kind: 'sglang' });
    expect(server.requestsFor('ok-sglang').at(-1)!.body).toMatchObject({
      return_token_ids: true,
      return_prompt_token_ids: true,
    });
    expect(captureTokens({ ...completion, want: { tokenIds: true, logprobs: true } }).problems).toEqual([]);

    const openai = await call('ok-openai', { server_kind: 'openai' });
    const body = server.requestsFor('ok-openai').at(-1)!.body!;
    for (const field of ['top_k', 'min_p', 'repetition_penalty', 'return_token_ids'])
      expect(body).not.toHaveProperty(field);
    const captured = captureTokens({ ...openai.completion, want: { tokenIds: false, logprobs: true } });
    expect(captured).toMatchObject({ promptIds: null, completionIds: null, problems: [] });
    expect(captured.logprobs).toHaveLength(openai.completion.usage!.completion_tokens);
  });

  it('never keeps ids or logprobs that disagree with usage, and says why when they are missing', async () => {
    const mismatch = await call('mismatch');
    expect(captureTokens({ ...mismatch.completion, want: { tokenIds: true, logprobs: true } })).toEqual({
      promptIds: null,
      completionIds: null,
      logprobs: null,
      problems: [
        `${mismatch.completion.usage!.completion_tokens - 1} completion token ids but usage.completion_tokens is ${mismatch.completion.usage!.completion_tokens}`,
        `${mismatch.completion.usage!.completion_tokens - 1} logprobs but usage.completion_tokens is ${mismatch.completion.usage!.completion_tokens}`,
      ],
    });
    const none = await call('none');
    const captured = captureTokens({ ...none.completion, want: { tokenIds: true, logprobs: true } });
    expect(captured).toMatchObject({ promptIds: null, completionIds: null, logprobs: null });
    expect(captured.problems).toEqual([
      'the server returned no prompt token ids (vLLM ≥ 0.10.2 or SGLang with return_token_ids)',
      'the server returned no logprobs',
    ]);
  });

  it('reads completion ids from logprob tokens spelled token_id:<id> (vLLM return_tokens_as_token_ids)', () => {
    const captured = captureTokens({
      usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
      promptTokenIds: [5, 6],
      completionTokenIds: undefined,
      logprobs: [
        { token: 'token_id:17', logprob: -0.5 },
        { token: 'token_id:2', logprob: -0.1 },
      ],
      want: { tokenIds: true, logprobs: true },
    });
    expect(captured).toEqual({ promptIds: [5, 6], completionIds: [17, 2], logprobs: [-0.5, -0.1], problems: [] });
  });

  it('classes every context-overflow wording as a model finish', async () => {
    for (const name of Object.keys(CONTEXT_OVERFLOW_ERRORS)) {
      const failure = await failureOf(call(`overflow-${name}`));
      expect({ name, code: failure.code, class: failure.class, retryable: failure.retryable }).toEqual({
        name,
        code: 'POLICY_CONTEXT_OVERFLOW',
        class: 'model',
        retryable: false,
      });
    }
  });

  it('classes 429, 5xx, engine errors, hangs and resets as retryable infra, and honours Retry-After', async () => {
    expect(await failureOf(call('throttled'))).toMatchObject({
      code: 'POLICY_THROTTLED',
      class: 'infra',
      retryable: true,
      details: { status: 429, retryAfterMs: 2000 },
    });
    expect(await failureOf(call('e500'))).toMatchObject({
      code: 'POLICY_SERVER_ERROR',
      class: 'infra',
      retryable: true,
      details: { status: 500 },
    });
    expect(await failureOf(call('e503'))).toMatchObject({
      code: 'POLICY_SERVER_ERROR',
      class: 'infra',
      retryable: true,
    });
    expect(await failureOf(call('engine'))).toMatchObject({
      code: 'POLICY_SERVER_ERROR',
      class: 'infra',
      retryable: true,
    });
    expect(await failureOf(call('hang', {}, 300))).toMatchObject({
      code: 'POLICY_TIMEOUT',
      class: 'infra',
      retryable: true,
    });
    expect(await failureOf(call('reset'))).toMatchObject({ code: 'POLICY_NETWORK', class: 'infra', retryable: true });
  });

  it('classes a closed port as a network failure', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    probe.close();
    await once(probe, 'close');
    const closed = new PolicyClient({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY });
    const failure = await failureOf(
      closed.complete({ body: { model: 'x' }, timeoutMs: 5000, fallbackToolCallId: String }),
    );
    expect(failure).toMatchObject({ code: 'POLICY_NETWORK', class: 'infra', retryable: true });
  });

  it('fails fast on configuration errors: wrong key, unknown model, missing tool parser, a body that is not a completion', async () => {
    const noKey = new PolicyClient({ baseUrl: server.baseUrl, apiKey: 'sk-wrong' });
    expect(
      await failureOf(noKey.complete({ body: { model: 'ok' }, timeoutMs: 5000, fallbackToolCallId: String })),
    ).toMatchObject({ code: 'POLICY_AUTH', class: 'input', retryable: false });
    expect(await failureOf(call('no-such-model'))).toMatchObject({
      code: 'POLICY_NOT_FOUND',
      class: 'input',
      retryable: false,
    });
    const parser = await failureOf(call('parser'));
    expect(parser).toMatchObject({ code: 'POLICY_REJECTED', class: 'input', retryable: false });
    expect(parser.message).toContain('--enable-auto-tool-choice');
    const wrongRoot = new PolicyClient({ baseUrl: server.baseUrl.replace(/\/v1$/, '/api'), apiKey: KEY });
    expect(
      (await failureOf(wrongRoot.complete({ body: { model: 'ok' }, timeoutMs: 5000, fallbackToolCallId: String })))
        .code,
    ).toBe('POLICY_NOT_FOUND');
  });

  it('keeps the key out of every error it raises', async () => {
    for (const model of ['throttled', 'e500', 'parser', 'no-such-model', 'overflow-vllm-old']) {
      const failure = await failureOf(call(model));
      expect(JSON.stringify(failure)).not.toContain(KEY);
    }
  });
});
