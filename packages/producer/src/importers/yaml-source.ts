import { parse as parseYaml, YAMLParseError } from 'yaml';
import { lineAt } from './json-source.js';
import { MAX_NESTING_DEPTH, yamlNestingOverflow } from './nesting-depth.js';

export type YamlParse =
  { ok: true; value: unknown } | { ok: false; reason: 'syntax' | 'depth'; message: string; line?: number };

/**
 * The one YAML reader of the importers (SWE-agent demonstrations, policy files). Never throws: a syntax error
 * reports its line, and a document nested deeper than MAX_NESTING_DEPTH is refused before yaml's composer —
 * which recurses and, for deep block sequences, can abort the whole process — ever sees it.
 */
export function parseYamlText(text: string): YamlParse {
  const deep = yamlNestingOverflow(text);
  if (deep !== undefined)
    return {
      ok: false,
      reason: 'depth',
      message: `nested deeper than ${MAX_NESTING_DEPTH} levels`,
      line: lineAt(text, deep),
    };
  try {
    // logLevel 'error': warnings (an unknown tag, say) are not printed to the console.
    return { ok: true, value: parseYaml(text, { logLevel: 'error' }) as unknown };
  } catch (error) {
    const line = error instanceof YAMLParseError ? error.linePos?.[0]?.line : undefined;
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
    return line === undefined
      ? { ok: false, reason: 'syntax', message }
      : { ok: false, reason: 'syntax', message, line };
  }
}

/** Message and hint for a failed YAML parse. */
export function yamlParseText(
  parsed: { reason: 'syntax' | 'depth'; message: string },
  syntaxHint: string,
): { message: string; hint: string } {
  if (parsed.reason === 'depth') {
    return {
      message: `too deeply nested (${parsed.message})`,
      hint: 'flatten the data: nothing here needs that many levels of lists and mappings',
    };
  }
  return { message: `not valid YAML (${parsed.message})`, hint: syntaxHint };
}
