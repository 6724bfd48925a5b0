/**
 * Regenerates examples/sweep.jsonl: six SWE-bench-style tasks on the `pyutils` example image, each with a
 * test_patch (made with git against the image), FAIL_TO_PASS / PASS_TO_PASS lists and a recorded
 * trajectory. Run with `npx tsx examples/build-sweep.ts`; the output is committed.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const image = join(here, 'images', 'pyutils');
const P2P = ['test_fizz_three', 'test_mean_simple', 'test_mul', 'test_shout', 'test_slug_spaces'].map(
  (t) => `${t} (tests.test_basic.TestBasic.${t})`,
);

interface Task {
  id: string;
  testClass: string;
  tests: Record<string, string>;
  imports: string;
  trajectory: Array<{ name: string; arguments: Record<string, unknown>; timeout_s?: number }>;
  expectResolved: boolean;
  note: string;
}

const view = (path: string) => ({ name: 'str_replace_editor', arguments: { command: 'view', path } });
const replace = (path: string, old_str: string, new_str: string) => ({
  name: 'str_replace_editor',
  arguments: { command: 'str_replace', path, old_str, new_str },
});
const bash = (command: string, timeout_s?: number) => ({
  name: 'execute_bash',
  arguments: { command },
  ...(timeout_s === undefined ? {} : { timeout_s }),
});

const tasks: Task[] = [
  {
    id: 'pyutils__calc-add',
    testClass: 'TestCalcAdd',
    imports: 'from pyutils.calc import add',
    tests: { test_add: 'self.assertEqual(add(2, 3), 5)' },
    trajectory: [
      view('/testbed/pyutils/calc.py'),
      replace('/testbed/pyutils/calc.py', '    return a - b', '    return a + b'),
      bash("cd /testbed && python3 -c 'from pyutils.calc import add; print(add(2, 3))'"),
    ],
    expectResolved: true,
    note: 'fixed with str_replace_editor',
  },
  {
    id: 'pyutils__text-reverse',
    testClass: 'TestReverseWords',
    imports: 'from pyutils.text import reverse_words',
    tests: { test_reverse_words: 'self.assertEqual(reverse_words("a b c"), "c b a")' },
    trajectory: [
      view('/testbed/pyutils/text.py'),
      replace('/testbed/pyutils/text.py', '    return sentence[::-1]', '    return " ".join(sentence.split())'),
    ],
    expectResolved: false,
    note: 'a wrong fix: words are not reversed',
  },
  {
    id: 'pyutils__fizz-order',
    testClass: 'TestFizzBuzz',
    imports: 'from pyutils.fizz import fizzbuzz',
    tests: { test_fizzbuzz_fifteen: 'self.assertEqual(fizzbuzz(15), "FizzBuzz")' },
    trajectory: [
      bash('sleep 30', 1),
      bash('cd /testbed && grep -n "% 15" pyutils/fizz.py'),
      replace(
        '/testbed/pyutils/fizz.py',
        '    if n % 3 == 0:\n        return "Fizz"',
        '    if n % 15 == 0:\n        return "FizzBuzz"\n    if n % 3 == 0:\n        return "Fizz"',
      ),
    ],
    expectResolved: true,
    note: 'one step times out (an observation, not a failure), then the fix lands',
  },
  {
    id: 'pyutils__stats-mean',
    testClass: 'TestMeanEmpty',
    imports: 'from pyutils.stats import mean',
    tests: { test_mean_empty: 'self.assertEqual(mean([]), 0.0)' },
    trajectory: [
      { name: 'execute_bash', arguments: { __raw: '{"command": "cat /testbed/pyutils/stats.py' } },
      bash('if then fi ('),
      { name: 'open_file', arguments: { path: '/testbed/pyutils/stats.py' } },
      replace(
        '/testbed/pyutils/stats.py',
        '    return sum(values) / len(values)',
        '    if not values:\n        return 0.0\n    return sum(values) / len(values)',
      ),
    ],
    expectResolved: true,
    note: 'malformed arguments, a bash syntax error and an unknown tool become error observations',
  },
  {
    id: 'pyutils__slug-lower',
    testClass: 'TestSlugLower',
    imports: 'from pyutils.slug import slugify',
    tests: { test_slug_lower: 'self.assertEqual(slugify("Hello World"), "hello-world")' },
    trajectory: [view('/testbed/pyutils/slug.py'), bash('cd /testbed && git status --short')],
    expectResolved: false,
    note: 'gives up: empty patch',
  },
  {
    id: 'pyutils__calc-regress',
    testClass: 'TestCalcAddAgain',
    imports: 'from pyutils.calc import add',
    tests: { test_add_negative: 'self.assertEqual(add(-2, -3), -5)' },
    trajectory: [
      replace('/testbed/pyutils/calc.py', '    return a - b', '    return a + b'),
      replace('/testbed/pyutils/calc.py', '    return a * b', '    return a ** b'),
    ],
    expectResolved: false,
    note: 'fixes the bug but breaks a PASS_TO_PASS test',
  },
];

function testPatch(task: Task): string {
  const dir = mkdtempSync(join(tmpdir(), 'rf-sweep-'));
  try {
    cpSync(image, dir, { recursive: true });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=demo@rollout-fleet', '-c', 'user.name=demo', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    const body = Object.entries(task.tests)
      .map(([name, assertion]) => `    def ${name}(self):\n        ${assertion}\n`)
      .join('\n');
    const file = join(dir, 'tests', 'test_basic.py');
    const original = readFileSync(file, 'utf8');
    const marker = '\n\nif __name__ == "__main__":';
    writeFileSync(file, original.replace(marker, `\n\nclass ${task.testClass}(unittest.TestCase):\n${body}${marker}`));
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('import unittest\n', `import unittest\n\n${task.imports}\n`),
    );
    return git('diff');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = join(here, 'sweep.jsonl');
writeFileSync(out, '');
const expected: Record<string, { resolved: boolean; note: string }> = {};
for (const task of tasks) {
  const episode = {
    run_id: 'demo',
    episode_id: task.id,
    instance_id: task.id,
    sandbox: { image: 'pyutils' },
    trajectory: task.trajectory,
    eval: {
      repo: 'example/pyutils',
      test_patch: testPatch(task),
      FAIL_TO_PASS: Object.keys(task.tests).map((t) => `${t} (tests.test_basic.${task.testClass}.${t})`),
      PASS_TO_PASS: P2P,
      test_command: 'python3 -m unittest -v',
      log_parser: 'django',
      timeout_s: 120,
    },
    limits: { step_timeout_s: 30, episode_deadline_s: 600 },
  };
  appendFileSync(out, `${JSON.stringify(episode)}\n`);
  expected[task.id] = { resolved: task.expectResolved, note: task.note };
}
writeFileSync(join(here, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
console.log(`wrote ${tasks.length} episodes to ${out}`);
