import { Parser, type CST } from 'yaml';

/**
 * Deepest nesting of arrays/objects (JSON) or sequences/mappings (YAML) an input may have. Recorded rollouts
 * nest about ten levels; 128 is serde_json's default recursion limit. The limit exists because everything
 * downstream walks values recursively (zod, JSON.stringify, the yaml composer, BullMQ's serialisation): without
 * it a file of 100 000 `[` ends `submit` with "Maximum call stack size exceeded" instead of a located problem.
 */
export const MAX_NESTING_DEPTH = 128;

/**
 * Offset in JSON `text` where the nesting first exceeds `limit`, or undefined. Brackets inside strings do not
 * count. A linear scan without recursion; meant for text JSON.parse accepted (on broken text it still ends).
 */
export function jsonNestingOverflow(text: string, limit = MAX_NESTING_DEPTH): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i += 1;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth += 1;
      if (depth > limit) return i;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth -= 1;
    }
  }
  return undefined;
}

/**
 * Offset in YAML `text` of the first collection nested deeper than `limit`, or undefined. Reads yaml's concrete
 * syntax tree (its lexer and parser keep explicit stacks) before anything recursive runs: the composer overflows
 * the stack near 1 000 levels and, for block sequences, has been seen to abort the whole process.
 */
export function yamlNestingOverflow(text: string, limit = MAX_NESTING_DEPTH): number | undefined {
  const pending: Array<{ token: CST.Token; depth: number }> = [];
  for (const token of new Parser().parse(text)) {
    if (token.type === 'document' && token.value !== undefined) pending.push({ token: token.value, depth: 0 });
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const { token: node, depth } = next;
      if (node.type !== 'block-map' && node.type !== 'block-seq' && node.type !== 'flow-collection') continue;
      if (depth + 1 > limit) return node.offset;
      for (const item of node.items) {
        if (item.key) pending.push({ token: item.key, depth: depth + 1 });
        if (item.value) pending.push({ token: item.value, depth: depth + 1 });
      }
    }
  }
  return undefined;
}
