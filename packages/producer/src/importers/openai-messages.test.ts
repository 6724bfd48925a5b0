import { describe, expect, it } from 'vitest';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { formatProblem } from '../validation/problem.js';
import { importOpenAiMessages } from './openai-messages.js';
import type { ImportOptions } from './types.js';

const options: ImportOptions = { runId: 'run-1', image: 'img:latest' };

interface HistoryMessage {
  role: string;
  content: unknown;
  tool_calls?: unknown[];
  tool_call_ids?: string[];
}

/**
 * The real v1 .traj history converted to OpenAI chat messages the way SWE-agent sends it
 * (trajectories-and-grading.md §1.2, `_history_to_messages`).
 */
const REAL_TRAJ = 'swe-agent/6e44b9__sweagenttestrepo-1c2844.traj';
function messagesFromRealTraj(): unknown[] {
  const traj = JSON.parse(readSharedData(REAL_TRAJ)) as { history: HistoryMessage[] };
  return traj.history.map((m) => {
    if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.tool_call_ids?.[0] };
    if (m.tool_calls !== undefined) return { role: m.role, content: m.content, tool_calls: m.tool_calls };
    return { role: m.role, content: m.content };
  });
}

describe('importOpenAiMessages', () => {
  itWith(
    [sharedDataNeed(REAL_TRAJ)],
    'turns assistant tool_calls into steps with the matching tool observations ({messages} form)',
    () => {
      const messages = messagesFromRealTraj();
      const file = {
        path: 'rollouts/6e44b9__sweagenttestrepo-1c2844.json',
        text: JSON.stringify({ messages, model_patch: 'diff --git a/x b/x\n' }),
      };
      const { episodes, problems } = importOpenAiMessages(file, options);
      expect(problems).toEqual([]);
      const episode = episodes[0]!;
      expect(episode.instance_id).toBe('6e44b9__sweagenttestrepo-1c2844');
      expect(episode.trajectory!.map((c) => c.name)).toEqual(['find_file', 'open', 'edit', 'bash']);
      expect(episode.trajectory![3]).toMatchObject({
        arguments: { command: 'python3 /SWE-agent__test-repo/tests/missing_colon.py' },
        id: 'call_dcF76aXH6e1pzqRwGxOwpuxb',
      });
      expect(episode.trajectory![3]!.observation).toMatch(/^8\.2\n/);
      expect(episode.model_patch).toBe('diff --git a/x b/x\n');
      expect(episode.metadata).toMatchObject({
        source_format: 'openai-messages',
        source: 'rollouts/6e44b9__sweagenttestrepo-1c2844.json',
      });
    },
  );

  it('accepts a bare message array with --instance, content parts and several calls per message', () => {
    const bare = [
      { role: 'user', content: [{ type: 'text', text: 'fix it' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls"}' } },
          {
            id: 'b',
            type: 'function',
            function: { name: 'str_replace_editor', arguments: { command: 'view', path: '/testbed' } },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'b', content: [{ type: 'text', text: 'dir listing' }] },
      { role: 'tool', tool_call_id: 'a', content: 'a.py\n' },
    ];
    const { episodes, problems } = importOpenAiMessages(
      { path: 'chat.json', text: JSON.stringify(bare) },
      { ...options, instanceId: 'django__django-1' },
    );
    expect(problems).toEqual([]);
    expect(episodes[0]!.instance_id).toBe('django__django-1');
    expect(episodes[0]!.trajectory).toEqual([
      { name: 'execute_bash', arguments: { command: 'ls' }, id: 'a', observation: 'a.py\n' },
      {
        name: 'str_replace_editor',
        arguments: { command: 'view', path: '/testbed' },
        id: 'b',
        observation: 'dir listing',
      },
    ]);
  });

  it('keeps malformed arguments as {__raw} instead of failing the file', () => {
    const chat = [
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'x', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls' } }],
      },
    ];
    const { episodes, problems } = importOpenAiMessages(
      { path: 'c.json', text: JSON.stringify({ messages: chat }) },
      options,
    );
    expect(problems).toEqual([]);
    expect(episodes[0]!.trajectory![0]!.arguments).toEqual({ __raw: '{"command": "ls' });
  });

  itWith(
    [sharedDataNeed(REAL_TRAJ)],
    'reads JSONL with one {instance_id, messages} per line and names bad lines',
    () => {
      const messages = messagesFromRealTraj();
      const lines = [
        JSON.stringify({ instance_id: 'sympy__sympy-13031', messages }),
        '{"instance_id": "broken", "messages": [',
        JSON.stringify({ messages }),
        JSON.stringify({ instance_id: 'x', messages: 'nope' }),
        JSON.stringify({
          instance_id: 'y',
          messages: [{ role: 'assistant', tool_calls: [{ id: 'q', function: { arguments: '{}' } }] }],
        }),
      ].join('\n');
      const { episodes, problems } = importOpenAiMessages({ path: 'rollouts.jsonl', text: lines }, options);
      expect(episodes.map((e) => [e.instance_id, e.episode_id, e.trajectory!.length])).toEqual([
        ['sympy__sympy-13031', 'sympy__sympy-13031', 4],
        ['rollouts-1', 'rollouts-1', 4],
      ]);
      expect(problems.map(formatProblem)).toEqual([
        expect.stringMatching(/^rollouts\.jsonl:2: not valid JSON \(.*\) — write exactly one JSON object per line/),
        'rollouts.jsonl:4: messages: expected a list of chat messages, got string — give {"messages": [...]} (optionally with "instance_id") or a bare list of {role, content, tool_calls?} messages',
        'rollouts.jsonl:5: messages[0].tool_calls[0].function.name: missing tool name (got undefined) — each tool call needs {id, type: "function", function: {name, arguments}}',
      ]);
    },
  );

  it('reports a transcript without tool calls', () => {
    const { episodes, problems } = importOpenAiMessages(
      {
        path: 't.json',
        text: JSON.stringify([
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '```bash\nls\n```' },
        ]),
      },
      options,
    );
    expect(episodes).toEqual([]);
    expect(problems[0]).toMatchObject({
      file: 't.json',
      field: 'messages',
      message: 'no assistant tool_calls to replay and no model_patch to grade',
    });
  });
});
