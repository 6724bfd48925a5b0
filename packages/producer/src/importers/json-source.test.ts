import { describe, expect, it } from 'vitest';
import { jsonErrorOffset } from './json-error-offset.js';
import { fileStem, formatFieldPath, parseJsonLines, parseJsonText } from './json-source.js';

describe('JSON sources', () => {
  it('locates syntax errors on the right line without echoing the input', () => {
    expect(jsonErrorOffset('{"a": [1, 2, {"b": "x"}], "c": null}')).toBeUndefined();
    expect(jsonErrorOffset('{"a": 1,}')).toBe(8);
    expect(jsonErrorOffset('[1,\n2,,]')).toBe(6);
    expect(jsonErrorOffset('{"a": "\\q"}')).toBe(7);
    const parsed = parseJsonText('{\n  "history": [\n}\n');
    expect(parsed).toEqual({ ok: false, reason: 'syntax', message: "Unexpected token '}'", line: 3 });
    expect(parseJsonText('\ufeff{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('numbers JSONL lines from 1, skipping blank ones, and reports bad lines', () => {
    const { records, problems } = parseJsonLines({ path: 'e.jsonl', text: '{"a":1}\n\n{"a":\n{"a":3}\n' });
    expect(records).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: { a: 3 } },
    ]);
    expect(problems).toMatchObject([{ file: 'e.jsonl', line: 3, code: 'INPUT_INVALID' }]);
  });

  it('formats field paths and file stems as people write them', () => {
    expect(formatFieldPath(['trajectory', 3, 'arguments'])).toBe('trajectory[3].arguments');
    expect(fileStem('out/django__django-11099/django__django-11099.traj')).toBe('django__django-11099');
  });
});
