/**
 * Policy episodes end to end: a scripted OpenAI-compatible server (real HTTP, recording every request) plays one
 * script per episode; two in-process workers run the agent loop in real bubblewrap sandboxes of vefaas-local,
 * grade with the SWE-bench rules and commit one result each to real Redis. Asserted: what the worker sent (tools
 * schema, sampling, capture flags, key, tool messages with their ids), what it recorded (turns, token ids and
 * logprobs against usage, steps, messages), and how every failure was classed and rewarded.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createLogger,
  jobIdFor,
  EpisodeResultSchema,
  EpisodeSchema,
  effectiveTemplates,
  expandPromptIds,
  openAiExportOf,
  trainingRecordsOf,
  renderTemplate,
  sampleSeed,
  templateValuesOf,
  type ChatMessage,
  type EpisodeInput,
  type EpisodeResult,
} from '@rollout-fleet/shared';
import { toolProfile, startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  CONTEXT_OVERFLOW_ERRORS,
  startScriptedPolicyServer,
  toyCompletionTokens,
  toyPromptIds,
  type PolicyScript,
  type RecordedPolicyRequest,
  type ScriptedPolicyServer,
} from '@rollout-fleet/test-kit/scripted-policy';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import {
  collectResults,
  configOf,
  fleetSandboxes,
  openPipeline,
  runCli,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import {
  CALC_PROBLEM,
  FIX,
  POLICY_KEY,
  POLICY_KEY_ENV,
  WRONG_FIX,
  call,
  calcEval,
  calls,
  policyEpisode,
} from './support/policy-scripts.js';

const RUN = 'policy-e2e';
const RUN_CHECK = "cd /testbed && python3 -c 'from pyutils.calc import add; print(add(2, 3))'";
const MALFORMED = { name: 'bash', arguments: '{"command": "ls' };
const OVERFLOWS = Object.keys(CONTEXT_OVERFLOW_ERRORS);

const SCRIPTS: Record<string, PolicyScript> = {
  fix: { turns: [calls(call.view()), calls(FIX), calls(call.bash(RUN_CHECK)), calls(call.submit())] },
  'wrong-fix': { turns: [calls(WRONG_FIX), calls(call.submit())] },
  'format-exit': { turns: [calls(FIX), calls(MALFORMED), calls(MALFORMED), calls(MALFORMED)] },
  'unknown-tool': {
    turns: [calls({ name: 'python_exec', arguments: { code: 'print(1)' } }), calls(FIX), calls(call.submit())],
  },
  multiple: { turns: [calls(call.bash('ls'), call.bash('pwd')), calls(FIX), calls(call.submit())] },
  'blocked-and-syntax': {
    turns: [calls(call.bash('vim pyutils/calc.py')), calls(call.bash('echo (')), calls(FIX), calls(call.submit())],
  },
  length: {
    turns: [
      { reply: { content: 'Let me think about this step by step. First', finish_reason: 'length' } },
      calls(FIX),
      calls(call.submit()),
    ],
  },
  'no-call': {
    turns: [{ reply: { content: 'The fix is straightforward; I am done.' } }, calls(FIX), calls(call.submit())],
  },
  // The model poisons what every new shell reads, then ends its shell: no session will start again.
  poisoned: {
    turns: [calls(FIX), calls(call.bash("echo 'exit' >> ~/.bashrc")), calls(call.bash('exit')), calls(call.submit())],
  },
  markup: {
    turns: [
      { reply: { content: '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}\n' } },
      calls(FIX),
      calls(call.submit()),
    ],
  },
  mini: {
    turns: [
      calls(
        call.bash("sed -i 's/return a - b/return a + b/' pyutils/calc.py"),
        call.bash("python3 -c 'from pyutils.calc import add; print(add(2, 3))'"),
      ),
      calls(call.bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'), call.bash('echo never')),
    ],
  },
  seed: {
    turns: [
      calls({
        name: 'execute_bash',
        arguments: { command: "cd /testbed && sed -i 's/return a - b/return a + b/' pyutils/calc.py" },
      }),
      { reply: { content: 'The sum is fixed.' } },
    ],
  },
  retried: {
    turns: [
      [
        { error: { status: 429, message: 'Too Many Requests', retry_after: 0 } },
        { error: { status: 500, message: 'Internal Server Error' } },
        { error: { status: 503, message: 'Service Unavailable' } },
        calls(FIX),
      ],
      [{ hang: true }, { reset: true }, calls(call.submit())],
    ],
  },
  persistent: { turns: [{ error: { status: 503, message: 'Service Unavailable' } }] },
  rejected: {
    turns: [
      {
        error: {
          status: 400,
          message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        },
      },
    ],
  },
  'key-missing': { turns: [calls(call.submit())] },
  'tokens-mismatch': {
    turns: [{ reply: { tool_calls: [FIX], tokens: 'mismatch' } }, calls(call.bash('true')), calls(call.submit())],
  },
  'turn-limit': { turns: [calls(call.bash('true')), calls(call.bash('true')), calls(call.submit())] },
  wall: { turns: [calls(call.bash('sleep 1')), calls(call.submit())] },
  timeouts: {
    turns: [
      calls(call.bash('sleep 30')),
      calls(call.bash('sleep 30')),
      calls(call.bash('sleep 30')),
      calls(call.submit()),
    ],
  },
  prefix: {
    turns: [calls(call.bash('unused: turn 0 is the recorded call')), calls(call.bash(RUN_CHECK)), calls(call.submit())],
  },
  clamp: { turns: [calls(FIX), { reply: { content: 'So the next step would be', finish_reason: 'length' } }] },
  predicted: { turns: [calls(FIX), calls(call.submit())] },
  ...Object.fromEntries(
    OVERFLOWS.map((name) => [
      `overflow-${name}`,
      {
        dialect: name.startsWith('sglang') ? 'sglang' : 'vllm',
        turns: [calls(FIX), { error: CONTEXT_OVERFLOW_ERRORS[name]! }],
      } satisfies PolicyScript,
    ]),
  ),
};

// policyEpisode's base seed is 11: each sample is sent its own seed, derived from it (docs/policy.md, "Seeds").
const FIX_SEED = sampleSeed(11, 'fix', 0);

describe('policy episodes on vefaas-local + Redis, against the scripted policy server', () => {
  let host: Host;
  let pipeline: Pipeline;
  let server: ScriptedPolicyServer;
  let workers: RunningWorker[] = [];
  const results = new Map<string, EpisodeResult>();
  let firstTurnTotal = 0;
  let env: Record<string, string> = {};
  let evalSpec: NonNullable<EpisodeInput['eval']>;
  let logText = '';
  let episodeIds: string[] = [];

  const result = (id: string): EpisodeResult => {
    const found = results.get(id);
    if (!found) throw new Error(`no result for ${id}`);
    return found;
  };
  const requests = (id: string): RecordedPolicyRequest[] => server.requestsFor(id);
  const lastMessages = (id: string): ChatMessage[] => requests(id).at(-1)!.body!.messages as ChatMessage[];

  beforeAll(async () => {
    host = await startHost();
    server = await startScriptedPolicyServer({ scripts: SCRIPTS, apiKey: POLICY_KEY });
    env = testEnv({ RF_POLICY_BACKOFF_MS: '20', RF_POLICY_MAX_INFLIGHT: '3' });
    const config = configOf(env);
    pipeline = openPipeline(config);
    evalSpec = await calcEval();
    const base = { runId: RUN, baseUrl: server.baseUrl, evalSpec };

    // The first request of a sweagent episode, and the fix reply, in the scripted server's toy tokens: the budget
    // the clamp and predicted-overflow episodes get.
    const probe = EpisodeSchema.parse(policyEpisode({ ...base, id: 'probe' }));
    const templates = effectiveTemplates(probe.policy!);
    const values = templateValuesOf(probe);
    const firstPrompt = toyPromptIds(
      [
        { role: 'system', content: renderTemplate(templates.system, values) },
        { role: 'user', content: renderTemplate(templates.instance, values) },
      ],
      toolProfile('sweagent').tools,
    ).length;
    firstTurnTotal =
      firstPrompt +
      toyCompletionTokens({ tool_calls: [{ function: { name: FIX.name, arguments: JSON.stringify(FIX.arguments) } }] })
        .length;

    const episodes: EpisodeInput[] = [
      ...[
        'fix',
        'wrong-fix',
        'format-exit',
        'unknown-tool',
        'multiple',
        'blocked-and-syntax',
        'length',
        'no-call',
        'poisoned',
        'markup',
        'tokens-mismatch',
        'retried',
        'rejected',
      ].map((id) => policyEpisode({ ...base, id })),
      policyEpisode({ ...base, id: 'mini', policy: { tool_profile: 'mini_bash' } }),
      policyEpisode({ ...base, id: 'seed', policy: { tool_profile: 'seed' } }),
      policyEpisode({ ...base, id: 'persistent', policy: { limits: { request_timeout_s: 5, retries: 2 } } }),
      policyEpisode({ ...base, id: 'key-missing', policy: { api_key_env: 'POLICY_KEY_NOBODY_SET' } }),
      policyEpisode({ ...base, id: 'turn-limit', policy: { limits: { max_turns: 2 } } }),
      policyEpisode({ ...base, id: 'wall', policy: { limits: { wall_s: 0.5 } } }),
      policyEpisode({ ...base, id: 'timeouts', episode: { limits: { step_timeout_s: 1, episode_deadline_s: 300 } } }),
      policyEpisode({
        ...base,
        id: 'prefix',
        episode: {
          trajectory: [
            { name: 'str_replace_editor', arguments: FIX.arguments as Record<string, unknown>, id: 'recorded-1' },
          ],
        },
      }),
      policyEpisode({ ...base, id: 'clamp', policy: { max_model_len: firstTurnTotal + 40 } }),
      policyEpisode({ ...base, id: 'predicted', policy: { max_model_len: firstTurnTotal } }),
      ...OVERFLOWS.map((name) =>
        policyEpisode({
          ...base,
          id: `overflow-${name}`,
          policy: { server_kind: name.startsWith('sglang') ? 'sglang' : 'vllm' },
        }),
      ),
    ];
    const parsed = episodes.map((e) => EpisodeSchema.parse(e));
    episodeIds = parsed.map((e) => e.episode_id);
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: parsed,
      policy: { attempts: 2, backoffMs: 50, retentionS: 3600 },
    });
    const secret = (name: string): string | undefined => (name === POLICY_KEY_ENV ? POLICY_KEY : undefined);
    // Every log line of both workers, at debug, to check the key never reaches one.
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((logText += chunk.toString()), done()) });
    const logger = createLogger({ level: 'debug', format: 'json', destination: sink });
    workers = await Promise.all(
      ['w1', 'w2'].map((workerId) =>
        startWorker({ config, target: host.target, logger, concurrency: 4, workerId, secret }),
      ),
    );
    for (const r of await collectResults(pipeline, RUN, parsed.length)) results.set(r.episode_id, r);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await pipeline?.close();
    await server?.close();
    await host?.close();
  });

  it('solves the task with the model choosing each action: resolved, reward 1, submitted', () => {
    const r = result('fix');
    expect(EpisodeResultSchema.parse(r)).toBeTruthy();
    expect(r).toMatchObject({
      status: 'completed',
      resolved: true,
      reward: 1,
      exit_status: 'submitted',
      failure: null,
    });
    expect(r.turns).toHaveLength(4);
    expect(r.steps.map((s) => [s.tool, s.turn, s.exit_code])).toEqual([
      ['str_replace_editor', 0, 0],
      ['str_replace_editor', 1, 0],
      ['bash', 2, 0],
    ]);
    expect(r.steps[2]!.output.trim()).toBe('5');
    expect(r.patch).toContain('+    return a + b');
    expect(r.policy).toMatchObject({
      base_url: server.baseUrl,
      model: 'fix',
      server_kind: 'vllm',
      tool_profile: 'sweagent',
    });
    expect(r.policy!.tools).toEqual(toolProfile('sweagent').tools);
  });

  it('sends the tools schema, explicit sampling, capture flags and the key; answers every call by its id', () => {
    const sent = requests('fix');
    expect(FIX_SEED).not.toBe(11);
    expect(result('fix').policy?.seed).toBe(FIX_SEED);
    expect(sent).toHaveLength(4);
    for (const request of sent) {
      expect(request.headers.authorization).toBe(`Bearer ${POLICY_KEY}`);
      expect(request.body).toMatchObject({
        model: 'fix',
        tools: toolProfile('sweagent').tools,
        tool_choice: 'auto',
        parallel_tool_calls: false,
        temperature: 0.7,
        top_p: 0.95,
        top_k: -1,
        min_p: 0,
        repetition_penalty: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        seed: FIX_SEED,
        max_completion_tokens: 256,
        logprobs: true,
        return_token_ids: true,
        stream: false,
      });
    }
    const [system, user] = sent[0]!.body!.messages as ChatMessage[];
    expect(system!.role).toBe('system');
    expect(user!.content).toContain(`<pr_description>\n${CALC_PROBLEM}\n</pr_description>`);
    expect(user!.content).toContain('<uploaded_files>\n/testbed\n</uploaded_files>');
    // Turn t+1 carries turn t's reply and one tool message answering its call id.
    const turns = result('fix').turns!;
    for (let t = 1; t < sent.length; t += 1) {
      const messages = sent[t]!.body!.messages as ChatMessage[];
      const reply = turns[t - 1]!.message;
      const callId = reply.tool_calls![0]!.id;
      expect(messages.at(-2)).toEqual({ role: 'assistant', content: null, tool_calls: reply.tool_calls });
      expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: callId });
      expect(String(messages.at(-1)!.content)).toMatch(/^OBSERVATION:\n/);
    }
    expect(String((sent[1]!.body!.messages as ChatMessage[]).at(-1)!.content)).toContain(
      "Here's the result of running `cat -n` on /testbed/pyutils/calc.py",
    );
  });

  it("records each turn: sampling as sent, the reply as returned, usage, and the server's own token ids and logprobs", () => {
    const r = result('fix');
    const sent = requests('fix');
    const prompts = expandPromptIds(r.turns!);
    r.turns!.forEach((turn, t) => {
      expect(turn).toMatchObject({
        index: t,
        finish_reason: 'tool_calls',
        retries: 0,
        model: 'fix',
        system_fingerprint: 'scripted-vllm',
      });
      expect(turn.sampling).toEqual({
        temperature: 0.7,
        top_p: 0.95,
        top_k: -1,
        min_p: 0,
        repetition_penalty: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        seed: FIX_SEED,
        max_completion_tokens: 256,
      });
      expect(turn.tokens!.prompt_len).toBe(turn.usage!.prompt_tokens);
      expect(turn.tokens!.completion_ids).toHaveLength(turn.usage!.completion_tokens);
      expect(turn.logprobs).toHaveLength(turn.usage!.completion_tokens);
      expect(turn.capture_problem).toBeUndefined();
      // The stored prompt (shared prefix + tail) is exactly what the server tokenized for that request.
      expect(prompts[t]).toEqual(toyPromptIds(sent[t]!.body!.messages as never, sent[t]!.body!.tools));
      expect(turn.tokens!.extends_previous).toBe(t > 0);
      if (t > 0)
        expect(turn.tokens!.prompt_ids_reused).toBe(
          r.turns![t - 1]!.tokens!.prompt_len + r.turns![t - 1]!.tokens!.completion_ids.length,
        );
    });
    expect(r.tokens).toEqual({
      prompt_tokens: r.turns!.reduce((n, t) => n + t.usage!.prompt_tokens, 0),
      completion_tokens: r.turns!.reduce((n, t) => n + t.usage!.completion_tokens, 0),
      total_tokens: r.turns!.reduce((n, t) => n + t.usage!.total_tokens, 0),
    });
    // The whole conversation, in OpenAI form: the last request's messages and the final reply.
    expect(r.messages).toEqual([...lastMessages('fix'), r.turns!.at(-1)!.message]);
  });

  it('grades a wrong fix 0', () => {
    expect(result('wrong-fix')).toMatchObject({
      status: 'completed',
      resolved: false,
      reward: 0,
      exit_status: 'submitted',
    });
  });

  it('ends as a format exit after the cap and grades the current diff', () => {
    const r = result('format-exit');
    expect(r).toMatchObject({ status: 'completed', resolved: true, reward: 1, exit_status: 'submitted (exit_format)' });
    expect(r.turns!.map((t) => t.format_error?.code)).toEqual([
      undefined,
      'POLICY_FORMAT_ERROR',
      'POLICY_FORMAT_ERROR',
      'POLICY_FORMAT_ERROR',
    ]);
    expect(r.steps).toHaveLength(1);
    const toolReplies = r.messages!.filter((m) => m.role === 'tool').slice(1);
    expect(toolReplies.map((m) => m.content)).toEqual(
      Array(3).fill('Your action could not be parsed properly: Tool call arguments are not valid JSON.'),
    );
  });

  it('feeds an unknown tool, several calls, a blocked program, a syntax error, a cut-off reply and leftover markup back as format errors', () => {
    const unknown = result('unknown-tool');
    expect(unknown.turns![0]!.format_error).toEqual({
      code: 'POLICY_FORMAT_ERROR',
      message:
        "Your action could not be parsed properly: Command 'python_exec' not found in list of available commands..",
    });
    expect(unknown).toMatchObject({ resolved: true, exit_status: 'submitted' });

    const multiple = result('multiple');
    const replyIds = multiple.turns![0]!.message.tool_calls!.map((c) => c.id);
    const answers = (multiple.messages ?? []).filter(
      (m) => m.role === 'tool' && replyIds.includes(m.tool_call_id ?? ''),
    );
    expect(answers.map((m) => m.tool_call_id)).toEqual(replyIds);
    expect(answers.every((m) => String(m.content).startsWith('Your last reply contains 2 tool calls'))).toBe(true);
    expect(multiple.steps.map((s) => s.turn)).toEqual([1]);

    const blocked = result('blocked-and-syntax');
    expect(blocked.turns!.map((t) => t.format_error?.code)).toEqual([
      'POLICY_BLOCKED_COMMAND',
      'SWEREX_BASH_SYNTAX',
      undefined,
      undefined,
    ]);
    const blockedReply = blocked.messages!.find(
      (m) => m.role === 'tool' && m.tool_call_id === blocked.turns![0]!.message.tool_calls![0]!.id,
    );
    expect(blockedReply?.content).toBe("Operation 'vim pyutils/calc.py' is not supported by this environment.");
    expect(blocked.steps.map((s) => s.tool)).toEqual(['bash', 'str_replace_editor']);
    expect(blocked).toMatchObject({ resolved: true, exit_status: 'submitted' });

    const length = result('length');
    expect(length.turns![0]).toMatchObject({ finish_reason: 'length', format_error: { code: 'POLICY_FORMAT_ERROR' } });
    expect(length.messages![3]).toMatchObject({ role: 'user', content: expect.stringContaining('output token limit') });

    const noCall = result('no-call');
    expect(noCall.turns![0]).toMatchObject({
      finish_reason: 'stop',
      format_error: { code: 'POLICY_FORMAT_ERROR', message: expect.stringContaining('did not call a tool') },
    });
    expect(noCall.messages![3]).toEqual({ role: 'user', content: noCall.turns![0]!.format_error!.message });
    expect(noCall).toMatchObject({ resolved: true, exit_status: 'submitted' });

    const markup = result('markup');
    expect(markup.turns![0]!.format_error?.message).toContain('tool-call markup');
    expect(markup).toMatchObject({ resolved: true, reward: 1 });
  });

  it('ends as exit_environment_error once the model broke its shell beyond repair, graded on the diff so far', () => {
    const r = result('poisoned');
    expect(r).toMatchObject({
      status: 'completed',
      resolved: true,
      reward: 1,
      exit_status: 'submitted (exit_environment_error)',
      failure: { code: 'SESSION_RESTART_FAILED', class: 'model' },
    });
    // No turn is asked for after the shell is gone; the last call is answered by its id all the same.
    expect(requests('poisoned')).toHaveLength(3);
    expect(r.steps.map((s) => [s.turn, s.error?.code])).toEqual([
      [0, undefined],
      [1, undefined],
      [2, 'SESSION_RESTART_FAILED'],
    ]);
    expect(r.messages!.at(-1)).toMatchObject({ role: 'tool', tool_call_id: r.turns![2]!.message.tool_calls![0]!.id });
    expect(r.attempts).toHaveLength(1);
  });

  it("plays mini-swe-agent's profile (parallel bash calls, fresh shells, the submit sentinel) and the seed's (a reply without a call ends)", () => {
    const mini = result('mini');
    expect(mini).toMatchObject({ resolved: true, reward: 1, exit_status: 'submitted' });
    expect(requests('mini')[0]!.body).toMatchObject({
      parallel_tool_calls: true,
      tools: toolProfile('mini_bash').tools,
    });
    expect(mini.steps.map((s) => s.command)).toEqual([
      "cd /testbed && bash -c 'sed -i '\"'\"'s/return a - b/return a + b/'\"'\"' pyutils/calc.py'",
      "cd /testbed && bash -c 'python3 -c '\"'\"'from pyutils.calc import add; print(add(2, 3))'\"'\"''",
      "cd /testbed && bash -c 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'",
    ]);
    const secondObservation = mini.messages!.filter((m) => m.role === 'tool')[1]!;
    expect(secondObservation.content).toBe('<returncode>0</returncode>\n<output>\n5\n</output>');
    expect(mini.messages!.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('was not executed') });

    const seed = result('seed');
    expect(seed).toMatchObject({ resolved: true, reward: 1, exit_status: 'submitted' });
    expect(requests('seed')[0]!.body!.tools).toEqual(toolProfile('seed').tools);
    expect(seed.turns!.at(-1)!.message).toMatchObject({ content: 'The sum is fixed.' });
  });

  it('retries 429, 500, 503, a hang and a reset within the turn, without spending the turn budget', () => {
    const r = result('retried');
    expect(r).toMatchObject({ status: 'completed', resolved: true, reward: 1, exit_status: 'submitted' });
    expect(r.turns!.map((t) => [t.retries, t.retry_codes])).toEqual([
      [3, ['POLICY_THROTTLED', 'POLICY_SERVER_ERROR', 'POLICY_SERVER_ERROR']],
      [2, ['POLICY_TIMEOUT', 'POLICY_NETWORK']],
    ]);
    expect(requests('retried').map((q) => [q.turn, q.attempt, q.outcome])).toEqual([
      [0, 1, 'error'],
      [0, 2, 'error'],
      [0, 3, 'error'],
      [0, 4, 'reply'],
      [1, 1, 'hang'],
      [1, 2, 'reset'],
      [1, 3, 'reply'],
    ]);
  });

  it('fails an episode whose endpoint keeps failing as infra, reward null, after retrying the turn and the job', () => {
    const r = result('persistent');
    expect(r).toMatchObject({
      status: 'failed',
      resolved: null,
      reward: null,
      failure: { code: 'POLICY_SERVER_ERROR', class: 'infra' },
    });
    expect(r.attempts.map((a) => a.failure?.code)).toEqual(['POLICY_SERVER_ERROR', 'POLICY_SERVER_ERROR']);
    expect(requests('persistent')).toHaveLength(2 * 3);
  });

  it('fails fast on configuration errors: no retry, no reward, a clear message', () => {
    const rejected = result('rejected');
    expect(rejected).toMatchObject({
      status: 'failed',
      reward: null,
      failure: { code: 'POLICY_REJECTED', class: 'input' },
    });
    expect(rejected.failure!.message).toContain('--enable-auto-tool-choice');
    expect(rejected.attempts).toHaveLength(1);
    expect(requests('rejected')).toHaveLength(1);

    const missing = result('key-missing');
    expect(missing).toMatchObject({
      status: 'failed',
      reward: null,
      sandbox_id: null,
      failure: { code: 'POLICY_KEY_MISSING', class: 'input' },
    });
    expect(missing.failure!.message).toContain('POLICY_KEY_NOBODY_SET');
    expect(requests('key-missing')).toHaveLength(0);
  });

  it('ends on a context overflow in every vLLM and SGLang wording as a model finish, graded', () => {
    for (const name of OVERFLOWS) {
      const r = result(`overflow-${name}`);
      expect({
        name,
        status: r.status,
        exit: r.exit_status,
        resolved: r.resolved,
        reward: r.reward,
        turns: r.turns!.length,
      }).toEqual({
        name,
        status: 'completed',
        exit: 'submitted (exit_context)',
        resolved: true,
        reward: 1,
        turns: 1,
      });
    }
  });

  it('clamps max_completion_tokens to the context left, and ends without a request once none is left', () => {
    const clamp = result('clamp');
    expect(clamp.turns!.map((t) => t.sampling.max_completion_tokens)).toEqual([256, 40]);
    expect(clamp).toMatchObject({ exit_status: 'submitted (exit_context)', resolved: true });
    const predicted = result('predicted');
    expect(predicted).toMatchObject({ exit_status: 'submitted (exit_context)', resolved: true });
    expect(requests('predicted')).toHaveLength(1);
  });

  it('keeps no token ids that disagree with usage, and says why', () => {
    const r = result('tokens-mismatch');
    expect(r.turns![0]).toMatchObject({
      tokens: null,
      logprobs: null,
      capture_problem: expect.stringContaining('completion token ids but usage.completion_tokens is'),
    });
    expect(r.turns![1]!.tokens).toMatchObject({ extends_previous: false, prompt_ids_reused: 0 });
    expect(r.turns![2]!.tokens!.extends_previous).toBe(true);
  });

  it('ends on the turn limit, on repeated step timeouts, and continues a recorded opening', () => {
    expect(result('turn-limit')).toMatchObject({
      status: 'completed',
      exit_status: 'exit_cost',
      resolved: false,
      reward: 0,
    });
    expect(requests('turn-limit')).toHaveLength(2);

    const timeouts = result('timeouts');
    expect(timeouts).toMatchObject({ status: 'completed', exit_status: 'exit_command_timeout', reward: 0 });
    expect(timeouts.steps.map((s) => s.timed_out)).toEqual([true, true, true]);

    const prefix = result('prefix');
    expect(prefix).toMatchObject({ resolved: true, exit_status: 'submitted' });
    expect(prefix.steps.map((s) => [s.tool, s.turn, s.tool_call_id])).toEqual([
      ['str_replace_editor', undefined, 'recorded-1'],
      ['bash', 0, prefix.turns![0]!.message.tool_calls![0]!.id],
    ]);
    const opening = requests('prefix')[0]!.body!.messages as ChatMessage[];
    expect(opening.slice(2).map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.[0]?.id])).toEqual([
      ['assistant', 'recorded-1'],
      ['tool', 'recorded-1'],
    ]);
  });

  it("emits one step-wise training record per turn: the server's ids and logprobs with the episode reward", async () => {
    const fix = result('fix');
    const records = trainingRecordsOf(fix);
    const sent = requests('fix');
    expect(records).toHaveLength(4);
    records.forEach((record, t) => {
      expect(record).toMatchObject({
        run_id: RUN,
        episode_id: 'fix',
        group: `${RUN}/fix`,
        turn: t,
        num_turns: 4,
        is_last_turn: t === 3,
        reward: 1,
        resolved: true,
        exit_status: 'submitted',
      });
      expect(record.prompt_token_ids).toEqual(toyPromptIds(sent[t]!.body!.messages as never, sent[t]!.body!.tools));
      expect(record.completion_token_ids).toHaveLength(fix.turns![t]!.usage!.completion_tokens);
      expect(record.logprobs).toEqual(fix.turns![t]!.logprobs);
    });
    expect(trainingRecordsOf(result('persistent'))).toEqual([]);

    // The CLI prints the same records, and says what it skipped.
    const cli = await runCli(['results', '--run', RUN, '--format', 'training'], env);
    expect(cli.code, cli.stderr).toBe(0);
    const lines = cli.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { episode_id: string; turn: number });
    expect(lines.filter((line) => line.episode_id === 'fix')).toEqual(records);
    expect(cli.stderr).toMatch(/result\(s\) skipped: no reward/);
    expect(cli.stderr).toMatch(/turn\(s\) without token ids/);
  });

  it('exports the conversation in OpenAI form; submitted again, it replays the same actions to the same patch and grade', async () => {
    const fix = result('fix');
    const cli = await runCli(['results', '--run', RUN, '--format', 'openai'], env);
    expect(cli.code, cli.stderr).toBe(0);
    const exported = cli.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { episode_id: string });
    const record = exported.find((line) => line.episode_id === 'fix');
    expect(record).toEqual(openAiExportOf(fix));
    expect(record).toMatchObject({
      tools: toolProfile('sweagent').tools,
      model: 'fix',
      reward: 1,
      exit_status: 'submitted',
    });

    const replayRun = `${RUN}-replay`;
    const validated = validateInputs([{ path: 'fix.openai.json', text: JSON.stringify(record) }], {
      runId: replayRun,
      image: 'pyutils',
    });
    expect(validated.problems).toEqual([]);
    const [episode] = validated.episodes;
    expect(episode!.metadata).toMatchObject({ source_format: 'openai-messages', skipped_actions: 'submit' });
    // An OpenAI transcript says nothing about grading: the task's eval spec goes with it, as a dataset would give it.
    const withEval = EpisodeSchema.parse({ ...episode!, eval: evalSpec });
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: replayRun,
      episodes: [withEval],
    });
    const [replayed] = await collectResults(pipeline, replayRun, 1);
    expect(replayed!.exit_status).toBeUndefined();
    expect(replayed!.steps.map((s) => [s.tool, s.command, s.exit_code])).toEqual(
      fix.steps.map((s) => [s.tool, s.command, s.exit_code]),
    );
    expect(replayed!.steps.map((s) => s.output)).toEqual(fix.steps.map((s) => s.output));
    expect(replayed).toMatchObject({ status: 'completed', resolved: true, reward: 1, patch: fix.patch });
  });

  it("ends when the agent's own time runs out", () => {
    expect(result('wall')).toMatchObject({ status: 'completed', exit_status: 'exit_total_execution_time', reward: 0 });
    expect(requests('wall')).toHaveLength(1);
  });

  it('keeps the endpoint key out of results, job data and logs, worker logs, and leaves no sandbox behind', async () => {
    for (const r of results.values()) expect(JSON.stringify(r)).not.toContain(POLICY_KEY);
    expect(logText).toContain('policy request failed; retrying this turn');
    expect(logText).not.toContain(POLICY_KEY);
    for (const id of episodeIds) {
      const job = await pipeline.queue.getJob(jobIdFor(RUN, id, 0));
      expect(JSON.stringify(job?.data)).not.toContain(POLICY_KEY);
      const { logs } = await pipeline.queue.getJobLogs(jobIdFor(RUN, id, 0));
      expect(logs.join('\n')).not.toContain(POLICY_KEY);
    }
    const { logs } = await pipeline.queue.getJobLogs(jobIdFor(RUN, 'retried', 0));
    expect(logs.join('\n')).toMatch(
      /^turn 1\/50 finish=tool_calls tokens=\d+\+\d+ request=[\d.]+s retries=3 \(POLICY_THROTTLED,POLICY_SERVER_ERROR,POLICY_SERVER_ERROR\)\n {2}step 1 str_replace_editor exit=0/m,
    );
    await vi.waitFor(async () => expect(await fleetSandboxes(host, pipeline.config)).toEqual([]), {
      timeout: 15_000,
      interval: 100,
    });
    // Every inflight slot was given back.
    const slotKeys = await pipeline.redis.keys(`rf:${pipeline.config.queue.prefix}:policy-inflight:*`);
    const held = await Promise.all(slotKeys.map((key) => pipeline.redis.zcard(key)));
    expect(held.filter((n) => n > 0)).toEqual([]);
  });
});
