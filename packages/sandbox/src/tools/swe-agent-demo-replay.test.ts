// Replays the str_replace_editor calls recorded in swe-agent/str_replace_anthropic_demo.yaml (the shared data)
// against a reconstructed tree and checks every observation. The recording comes from an older tool/template (tools spec
// §3.11), so the test keeps, as data, the exact list of known differences per step and asserts that applying
// exactly those to our output reproduces the recording, and that each of them is needed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toolCallToCommand } from './tool-call-to-command.js';
import { makeScratch, runShell, type Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';

const DEMO = 'swe-agent/str_replace_anthropic_demo.yaml';
const RECORDED_ROOT = '/swe-agent-test-repo';

type Difference = 'state-suffix' | 'empty-line-tabs' | 'snippet-one-line-later';

/** Why the older recording differs from what the current reference (and our tool) prints. */
const KNOWN_DIFFERENCES: Record<Difference, string> = {
  'state-suffix':
    'the older next_step_template printed the output without its trailing newlines, then "\\n(Open file: )\\n(Current directory: )\\nbash-$"',
  'empty-line-tabs':
    'the YAML dump dropped trailing whitespace, so empty numbered lines read "     2" instead of "     2\\t"',
  'snippet-one-line-later':
    'the older str_replace snippet ended one line later than §3.7 computes (min(k + 4 + newlines, L))',
};

/** Exactly the differences each recorded step shows, in call order. */
const EXPECTED: ReadonlyArray<{ id: string; command: string; differences: readonly Difference[] }> = [
  {
    id: 'call_ggIm89M8rcBQorveMgkIrL7G',
    command: 'str_replace_editor view /swe-agent-test-repo',
    differences: ['state-suffix'],
  },
  {
    id: 'call_QbSqph4VzA951X9eMEgsvyOm',
    command: 'str_replace_editor view /swe-agent-test-repo/src/testpkg/missing_colon.py',
    differences: ['state-suffix', 'empty-line-tabs'],
  },
  {
    id: 'call_QgE1MNhZQ2W66DgwRZGXEo1D',
    command:
      "str_replace_editor str_replace /swe-agent-test-repo/src/testpkg/missing_colon.py   --old_str 'def division(a: float, b: float) -> float' --new_str 'def division(a: float, b: float) -> float:'",
    differences: ['state-suffix', 'empty-line-tabs', 'snippet-one-line-later'],
  },
];

/** The file as the recorded `view` shows it (11 numbered lines: it ends in "\n\n"). */
const MISSING_COLON = [
  '#!/usr/bin/env python3',
  '',
  '',
  'def division(a: float, b: float) -> float',
  '    return a/b',
  '',
  '',
  'if __name__ == "__main__":',
  '    print(division(123, 15))',
  '',
  '',
].join('\n');

const TREE: Record<string, string> = {
  'pyproject.toml': '[project]\nname = "testpkg"\n',
  'README.md': '# test repo\n',
  'src/testpkg/missing_colon.py': MISSING_COLON,
  'src/testpkg/__init__.py': '',
  'problem_statements/1.md': 'x\n',
  'problem_statements/1a.md': 'x\n',
  'problem_statements/22.md': 'x\n',
  'tests/test_tribonaccy.py': 'x\n',
  'tests/existing_lint_error.py': 'x\n',
  'tests/missing_colon.py': MISSING_COLON,
  'tests/filetoread.txt': 'x\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.gitignore': '*.pyc\n',
};

interface HistoryEntry {
  role: string;
  content: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_ids?: string[];
}

interface RecordedCall {
  id: string;
  name: string;
  arguments: string;
  observation: string;
}

function recordedCalls(): RecordedCall[] {
  const demo = parse(readSharedData(DEMO)) as { history: HistoryEntry[] };
  const observations = new Map<string, string>();
  for (const entry of demo.history) {
    if (entry.role === 'tool') for (const id of entry.tool_call_ids ?? []) observations.set(id, entry.content);
  }
  return demo.history.flatMap((entry) =>
    (entry.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      observation: observations.get(call.id) ?? '',
    })),
  );
}

/** find's order is the filesystem's, not reproducible: sort directory-listing lines on both sides. */
function canonicalListing(text: string): string {
  const match = /^(Here's the files and directories[^\n]*\n[^\n]*\n)((?:\/[^\n]*\n?)*)([\s\S]*)$/.exec(text);
  if (!match) return text;
  const [, head = '', listing = '', rest = ''] = match;
  const lines = listing.split('\n').filter((line) => line !== '');
  const endsWithNewline = listing.endsWith('\n');
  return head + lines.sort().join('\n') + (endsWithNewline ? '\n' : '') + rest;
}

function applyDifferences(output: string, differences: readonly Difference[], editedFile: string): string {
  let text = output;
  if (differences.includes('snippet-one-line-later')) {
    const marker = 'Review the changes';
    const at = text.indexOf(marker);
    const numbers = [...text.slice(0, at).matchAll(/^ *(\d+)\t/gm)].map((match) => Number(match[1]));
    const last = numbers.at(-1) ?? 0;
    const extra = `${String(last + 1).padStart(6)}\t${editedFile.split('\n')[last] ?? ''}\n`;
    text = text.slice(0, at) + extra + text.slice(at);
  }
  if (differences.includes('empty-line-tabs')) text = text.replace(/^( *\d+)\t$/gm, '$1');
  if (differences.includes('state-suffix'))
    text = `${text.replace(/\n+$/, '')}\n(Open file: )\n(Current directory: )\nbash-$`;
  return text;
}

let scratch: Scratch;
let root: string;

beforeAll(() => {
  scratch = makeScratch();
  root = join(scratch.dir, 'swe-agent-test-repo');
  for (const [relative, content] of Object.entries(TREE)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
});
afterAll(() => scratch.cleanup());

// The demo is read in place from the shared data: skipped with the reason where that is absent, a failure under CI.
describeWith([sharedDataNeed(DEMO)], 'replay of str_replace_anthropic_demo.yaml', () => {
  it('holds the expected calls: three str_replace_editor calls, then submit (not one of our tools)', () => {
    const calls = recordedCalls();
    expect(calls.map((call) => call.name)).toEqual([
      'str_replace_editor',
      'str_replace_editor',
      'str_replace_editor',
      'submit',
    ]);
    expect(calls.slice(0, 3).map((call) => call.id)).toEqual(EXPECTED.map((step) => step.id));
    const submit = toolCallToCommand({ name: 'submit', arguments: calls[3]?.arguments ?? '' });
    expect(submit.ok).toBe(false);
  });

  it('builds the recorded command lines from the recorded tool calls', () => {
    recordedCalls()
      .slice(0, 3)
      .forEach((call, index) => {
        expect(toolCallToCommand({ name: call.name, arguments: call.arguments })).toEqual({
          ok: true,
          command: EXPECTED[index]?.command,
        });
      });
  });

  it('reproduces every observation up to exactly the listed differences, each of which is needed', () => {
    const calls = recordedCalls().slice(0, 3);
    const editedPath = join(root, 'src/testpkg/missing_colon.py');
    calls.forEach((call, index) => {
      const step = EXPECTED[index];
      if (!step) throw new Error(`no expectation for step ${index}`);
      const built = toolCallToCommand({ name: call.name, arguments: call.arguments.replaceAll(RECORDED_ROOT, root) });
      if (!built.ok) throw new Error(built.error.message);
      const run = runShell(built.command, { scratch });
      expect({ step: index, code: run.code, stderr: run.stderr }).toEqual({ step: index, code: 0, stderr: '' });
      const output = run.stdout.toString('utf8');
      const recorded = canonicalListing(call.observation.replaceAll(RECORDED_ROOT, root));
      const edited = readFileSync(editedPath, 'utf8');

      // Format of the current reference: what §3.4–3.7 say the tool prints.
      if (index === 0)
        expect(output).toMatch(
          /^Here's the files and directories up to 2 levels deep in \S+, excluding hidden items:\n(\/\S*\n)+\n\n$/,
        );
      else if (index === 1)
        expect(output).toMatch(/^Here's the result of running `cat -n` on \S+:\n( {0,5}\d+\t[^\n]*\n)+\n$/);
      else
        expect(output).toMatch(
          /^The file (\S+) has been edited\. Here's the result of running `cat -n` on a snippet of \1:\n( {0,5}\d+\t[^\n]*\n)+Review the changes and make sure they are as expected\. Edit the file again if necessary\.\n$/,
        );

      expect(canonicalListing(applyDifferences(output, step.differences, edited))).toBe(recorded);
      for (const difference of step.differences) {
        const without = step.differences.filter((other) => other !== difference);
        expect({
          step: index,
          difference,
          reproduces: canonicalListing(applyDifferences(output, without, edited)) === recorded,
        }).toEqual({
          step: index,
          difference,
          reproduces: false,
        });
      }
    });
    expect(readFileSync(editedPath, 'utf8')).toBe(MISSING_COLON.replace('-> float\n', '-> float:\n'));
  });

  it('documents every difference it relies on', () => {
    const used = new Set(EXPECTED.flatMap((step) => step.differences));
    expect([...used].sort()).toEqual(Object.keys(KNOWN_DIFFERENCES).sort());
  });
});
