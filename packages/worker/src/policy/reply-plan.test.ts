/**
 * How one assistant reply is planned, per tool profile (policy-loop.md §3, §4, §6.9–§6.11): a reply that stops
 * without a call is a format error for SWE-agent and mini-swe-agent and the end for the seed's veRL-style loop;
 * a submit ends the episode only alone and without arguments; every call of a reply that is not executed is
 * answered by its id; SWE-agent's blocklist is matched as SWE-agent matches it.
 */
import { describe, expect, it } from 'vitest';
import { toolProfile } from './tool-profiles.js';
import { type ChatMessage, type ToolProfileName } from '@rollout-fleet/shared';
import { blockedObservation, isBlockedCommand } from './blocklist.js';
import { FORMAT_ERROR_TEXTS, multipleCallsText } from './format-errors.js';
import { planReply } from './reply-plan.js';

type Call = { id: string; name: string; arguments: string | Record<string, unknown> };

function reply(content: string | null, ...calls: Call[]): ChatMessage {
  const message: ChatMessage = { role: 'assistant', content };
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: {
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
  }
  return message;
}

function plan(
  profile: ToolProfileName,
  message: ChatMessage,
  finishReason: string | null = message.tool_calls ? 'tool_calls' : 'stop',
) {
  const p = toolProfile(profile);
  return planReply({ message, finishReason, profile: p, parallel: p.parallelToolCalls, workingDir: '/testbed' });
}

const bash = (id: string, command: string): Call => ({ id, name: 'bash', arguments: { command } });

describe('planReply', () => {
  it('a reply that stops without a call: a format error (user message) for sweagent and mini_bash, the end for seed', () => {
    const text = reply('I think the fix is done.');
    expect(plan('sweagent', text, 'stop')).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: FORMAT_ERROR_TEXTS.missing,
      replies: [],
    });
    expect(plan('mini_bash', text, 'stop')).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: FORMAT_ERROR_TEXTS.missingParallel,
      replies: [],
    });
    expect(plan('seed', text, 'stop')).toEqual({ kind: 'finished' });
    // An empty reply is no call either.
    expect(plan('sweagent', reply(null), 'stop')).toMatchObject({
      kind: 'format',
      message: FORMAT_ERROR_TEXTS.missing,
    });
  });

  it("a cut-off reply or leftover markup is a format error in every profile, even the seed's", () => {
    for (const profile of ['sweagent', 'mini_bash', 'seed'] as const) {
      expect(plan(profile, reply('Let me first'), 'length')).toMatchObject({
        kind: 'format',
        message: FORMAT_ERROR_TEXTS.length,
        replies: [],
      });
      expect(plan(profile, reply('<tool_call>\n{"name": "bash"'), 'stop')).toMatchObject({
        kind: 'format',
        message: FORMAT_ERROR_TEXTS.markup,
      });
    }
    // Markup beside a parsed call: the call is answered with the markup error, not run.
    expect(plan('sweagent', reply('<function=bash>', bash('c1', 'ls')))).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: FORMAT_ERROR_TEXTS.markup,
      replies: [{ id: 'c1', content: FORMAT_ERROR_TEXTS.markup }],
    });
  });

  it('submit alone ends the episode; with arguments it is a format error; beside another call (one allowed) nothing runs', () => {
    expect(plan('sweagent', reply(null, { id: 's', name: 'submit', arguments: '' }))).toEqual({ kind: 'submit' });
    expect(plan('sweagent', reply(null, { id: 's', name: 'submit', arguments: {} }))).toEqual({ kind: 'submit' });
    expect(plan('sweagent', reply(null, { id: 's', name: 'submit', arguments: { patch: 'x' } }))).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: 'Your action could not be parsed properly: Unexpected argument(s): patch.',
      replies: [{ id: 's', content: 'Your action could not be parsed properly: Unexpected argument(s): patch.' }],
    });
    const both = plan('sweagent', reply(null, bash('b', 'ls'), { id: 's', name: 'submit', arguments: {} }));
    expect(both).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: multipleCallsText(2),
      replies: [
        { id: 'b', content: multipleCallsText(2) },
        { id: 's', content: multipleCallsText(2) },
      ],
    });
  });

  it('parallel calls (mini_bash) run in order; one bad call stops the reply and every id is answered', () => {
    expect(plan('mini_bash', reply(null, bash('a', 'ls'), bash('b', 'pwd')))).toEqual({
      kind: 'execute',
      calls: [
        { id: 'a', name: 'bash', arguments: { command: 'ls' } },
        { id: 'b', name: 'bash', arguments: { command: 'pwd' } },
      ],
    });
    const bad = plan(
      'mini_bash',
      reply(null, bash('a', 'ls'), { id: 'b', name: 'bash', arguments: '{"command": "ls' }),
    );
    expect(bad).toEqual({
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: 'Your action could not be parsed properly: Tool call arguments are not valid JSON.',
      replies: [
        { id: 'a', content: FORMAT_ERROR_TEXTS.notExecuted },
        { id: 'b', content: 'Your action could not be parsed properly: Tool call arguments are not valid JSON.' },
      ],
    });
  });

  it("an unknown tool, a tool of another profile and a missing argument are format errors with SWE-agent's texts", () => {
    expect(plan('sweagent', reply(null, { id: 'x', name: 'python_exec', arguments: { code: '1' } }))).toMatchObject({
      kind: 'format',
      message:
        "Your action could not be parsed properly: Command 'python_exec' not found in list of available commands..",
    });
    // execute_bash is the seed's, not SWE-agent's.
    expect(
      plan('sweagent', reply(null, { id: 'x', name: 'execute_bash', arguments: { command: 'ls' } })),
    ).toMatchObject({ kind: 'format', code: 'POLICY_FORMAT_ERROR' });
    const missing = plan(
      'sweagent',
      reply(null, { id: 'x', name: 'str_replace_editor', arguments: { command: 'view' } }),
    );
    expect(missing).toMatchObject({ kind: 'format', code: 'POLICY_FORMAT_ERROR', replies: [{ id: 'x' }] });
    expect(missing.kind === 'format' && missing.message).toMatch(/path/);
    // Cut off inside a call: the parse error says so too.
    const cut = plan('sweagent', reply(null, { id: 'x', name: 'bash', arguments: '{"command": "gre' }), 'length');
    expect(cut.kind === 'format' && cut.message).toContain(FORMAT_ERROR_TEXTS.length);
  });

  it('blocked interactive programs are answered with "not supported", as SWE-agent matches them', () => {
    expect(plan('sweagent', reply(null, bash('v', '  vim pyutils/calc.py ')))).toEqual({
      kind: 'format',
      code: 'POLICY_BLOCKED_COMMAND',
      message: "Operation 'vim pyutils/calc.py' is not supported by this environment.",
      replies: [{ id: 'v', content: "Operation 'vim pyutils/calc.py' is not supported by this environment." }],
    });
    expect(blockedObservation('less x')).toBe("Operation 'less x' is not supported by this environment.");
    for (const blocked of [
      'vim',
      'vi x',
      'nano a',
      'less log',
      'tail -f log',
      'python -m venv .v',
      'make test',
      'python',
      'python3',
      'ipython',
      'bash',
      'sh',
      '/bin/sh',
      'su',
      'gdb ./a',
      'r2 bin',
      'radare2 bin',
    ]) {
      expect({ blocked, is: isBlockedCommand(blocked) }).toEqual({ blocked, is: true });
    }
    // SWE-agent's prefix match blocks `view…` through `vi` too; exact names block only themselves.
    expect(isBlockedCommand('view x')).toBe(true);
    for (const allowed of [
      'python3 -c "print(1)"',
      'bash -n x.sh',
      'tail -n 5 log',
      'ls',
      'radare2 -q -c "pd 10" bin',
      'cat Makefile',
    ]) {
      expect({ allowed, is: isBlockedCommand(allowed) }).toEqual({ allowed, is: false });
    }
    // The seed's execute_bash is checked the same way; a mini_bash command too.
    expect(
      plan('seed', reply(null, { id: 'e', name: 'execute_bash', arguments: { command: 'nano x' } })),
    ).toMatchObject({ code: 'POLICY_BLOCKED_COMMAND' });
    expect(plan('mini_bash', reply(null, bash('m', 'less x'), bash('n', 'ls')))).toMatchObject({
      code: 'POLICY_BLOCKED_COMMAND',
      replies: [
        { id: 'm', content: "Operation 'less x' is not supported by this environment." },
        { id: 'n', content: FORMAT_ERROR_TEXTS.notExecuted },
      ],
    });
  });
});
