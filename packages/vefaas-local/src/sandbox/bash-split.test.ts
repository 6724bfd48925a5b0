/** The bashlex stand-in in runtime/rex_bash_split.py (SWE-ReX joins top-level commands with " ; "). */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { RUNTIME_DIR } from './jail-layout.js';

const FALLBACK = 'FALLBACK';

function split(commands: string[]): Array<string[] | typeof FALLBACK> {
  const script = [
    'import json, sys',
    'from rex_bash_split import Unsupported, split_bash_command',
    'out = []',
    'for c in json.load(sys.stdin):',
    '    try:',
    '        out.append(split_bash_command(c))',
    '    except Unsupported:',
    `        out.append("${FALLBACK}")`,
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(
    execFileSync('/usr/bin/python3', ['-c', script], {
      cwd: RUNTIME_DIR,
      input: JSON.stringify(commands),
      encoding: 'utf8',
    }),
  ) as Array<string[] | typeof FALLBACK>;
}

describe('split_bash_command', () => {
  it('splits at top-level newlines and keeps continuations, quotes, heredocs and compounds whole', () => {
    const cases: Array<[string, string[]]> = [
      ['cmd1\ncmd2', ['cmd1', 'cmd2']],
      ['cmd1\\\n asdf', ['cmd1\\\n asdf']],
      ['cmd1<<EOF\na\nb\nEOF\ncmd2<<EOF\nd\ne\nEOF', ['cmd1<<EOF\na\nb\nEOF', 'cmd2<<EOF\nd\ne\nEOF']],
      ['cmd1 "a\nb"', ['cmd1 "a\nb"']],
      ['\n\n\n', []],
      ['# only a comment', []],
      ['echo a # c\n# d\n\necho b', ['echo a', 'echo b']],
      ['a &&\n b | \n c', ['a &&\n b | \n c']],
      ['for i in 1 2; do\n echo $i\ndone\necho x', ['for i in 1 2; do\n echo $i\ndone', 'echo x']],
      ['if true\nthen\n echo a\nfi', ['if true\nthen\n echo a\nfi']],
      ['f() {\n echo x\n}\nf', ['f() {\n echo x\n}', 'f']],
      ['echo $(echo a\necho b)\necho c', ['echo $(echo a\necho b)', 'echo c']],
      [
        'case x in\n a) echo a;;\n *) echo b;;\nesac\necho c',
        ['case x in\n a) echo a;;\n *) echo b;;\nesac', 'echo c'],
      ],
      ['sleep 1 &\necho y', ['sleep 1 &', 'echo y']],
      ['a;\nb', ['a;', 'b']],
    ];
    expect(split(cases.map(([c]) => c))).toEqual(cases.map(([, items]) => items));
  });

  it('gives up (fallback terminator) where bashlex cannot parse', () => {
    const cases = [
      'A=(1 2)',
      '[[ -n x ]]',
      "cat <<'EOF'\nx\nEOF",
      '((x=1))',
      'for ((i=0;i<2;i++)); do echo; done',
      'time ls',
      'select x in a; do break; done',
    ];
    expect(split(cases)).toEqual(cases.map(() => FALLBACK));
  });
});
