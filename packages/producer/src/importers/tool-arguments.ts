import { isRecord, parseJsonText } from './json-source.js';
import type { ToolCallInput } from './types.js';

/**
 * Tool-call arguments as recorded (OpenAI and SWE-agent send a JSON string; some writers an object).
 * Lenient on purpose: a malformed string is the model's mistake, not the file's, so it is kept as
 * `{__raw: "<string>"}` and replay turns it into an error observation, as the reference agent does.
 * An empty string means "no arguments" (`submit` is often recorded that way).
 */
export function parseToolArguments(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (isRecord(raw)) return raw;
  if (typeof raw !== 'string') return { __raw: JSON.stringify(raw) };
  if (raw.trim() === '') return {};
  const parsed = parseJsonText(raw);
  return parsed.ok && isRecord(parsed.value) ? parsed.value : { __raw: raw };
}

/** Message content as text: a string, or the `text` of each content part joined; null/absent → undefined. */
export function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((part) => {
    if (typeof part === 'string') return [part];
    if (isRecord(part) && typeof part['text'] === 'string') return [part['text']];
    return [];
  });
  return texts.length === 0 ? undefined : texts.join('');
}

/** One OpenAI-style tool call as a trajectory step, with the observation its `tool` answer recorded. */
export function toolCallInput(
  name: string,
  toolCall: unknown,
  fn: Record<string, unknown> | undefined,
  observations: ReadonlyMap<string, string>,
): ToolCallInput {
  const call: ToolCallInput = { name, arguments: parseToolArguments(fn?.['arguments']) };
  const id = isRecord(toolCall) ? toolCall['id'] : undefined;
  if (typeof id === 'string') {
    call.id = id;
    const observation = observations.get(id);
    if (observation !== undefined) call.observation = observation;
  }
  return call;
}
