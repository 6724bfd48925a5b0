/**
 * A unified diff of two texts by lines (`-` first text, `+` second), for showing why a replayed observation
 * differs from the recorded one. Longest-common-subsequence based; very large inputs fall back to a plain
 * before/after listing so the cost stays bounded.
 */

const CONTEXT = 3;
/** Above this many LCS table cells the diff is not aligned (the texts are shown whole, clipped). */
const MAX_CELLS = 4_000_000;

type Op = { kind: ' ' | '-' | '+'; text: string; a: number; b: number };

function operations(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // lengths[i][j] = LCS of a[i..], b[j..], stored row by row in one array.
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i] ?? '', a: i, b: j });
      i += 1;
      j += 1;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      ops.push({ kind: '-', text: a[i] ?? '', a: i, b: j });
      i += 1;
    } else {
      ops.push({ kind: '+', text: b[j] ?? '', a: i, b: j });
      j += 1;
    }
  }
  for (; i < n; i += 1) ops.push({ kind: '-', text: a[i] ?? '', a: i, b: j });
  for (; j < m; j += 1) ops.push({ kind: '+', text: b[j] ?? '', a: i, b: j });
  return ops;
}

function hunks(ops: readonly Op[]): string[] {
  const out: string[] = [];
  let index = 0;
  while (index < ops.length) {
    while (index < ops.length && ops[index]?.kind === ' ') index += 1;
    if (index >= ops.length) break;
    const start = Math.max(0, index - CONTEXT);
    let end = index;
    // Extend while another change follows within 2 × CONTEXT unchanged lines.
    for (let k = index; k < ops.length; k += 1) {
      if (ops[k]?.kind !== ' ') end = k;
      else if (k - end > 2 * CONTEXT) break;
    }
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    const slice = ops.slice(start, stop);
    const first = slice[0];
    const aCount = slice.filter((op) => op.kind !== '+').length;
    const bCount = slice.filter((op) => op.kind !== '-').length;
    out.push(
      `@@ -${(first?.a ?? 0) + (aCount > 0 ? 1 : 0)},${aCount} +${(first?.b ?? 0) + (bCount > 0 ? 1 : 0)},${bCount} @@`,
    );
    for (const op of slice) out.push(`${op.kind}${op.text}`);
    index = stop;
  }
  return out;
}

/** Unified diff of `recorded` (`-`) against `replayed` (`+`), at most `maxChars` characters. */
export function lineDiff(recorded: string, replayed: string, maxChars = 8_000): string {
  const a = recorded.split('\n');
  const b = replayed.split('\n');
  let body: string[];
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) {
    body = ['@@ not aligned: texts too long @@', ...a.map((line) => `-${line}`), ...b.map((line) => `+${line}`)];
  } else {
    body = hunks(operations(a, b));
  }
  const text = ['--- recorded', '+++ replayed', ...body].join('\n');
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[… diff clipped at ${maxChars} characters]`;
}
