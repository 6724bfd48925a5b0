/**
 * A toy tokenizer and chat template for the scripted policy server: deterministic ids from text pieces, rendered
 * per message so that turn t+1's prompt starts with turn t's prompt followed by its completion (as real chat
 * templates do when the history only grows). Lets tests check captured ids and logprobs against usage without a
 * model.
 */
const IM_START = 1;
const IM_END = 2;
const NEWLINE = 3;
const ROLE_IDS: Record<string, number> = { system: 4, user: 5, assistant: 6, tool: 7 };
const VOCAB = 32_000;
const FIRST_TEXT_ID = 100;

export interface ToyToken {
  id: number;
  text: string;
}

function hash(text: string): number {
  // FNV-1a, 32 bit.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Words, runs of spaces and single other characters, each one token. */
export function toyTokenize(text: string): ToyToken[] {
  return (text.match(/[A-Za-z0-9_]+|\s+|[^A-Za-z0-9_\s]/g) ?? []).map((piece) => ({
    id: FIRST_TEXT_ID + (hash(piece) % VOCAB),
    text: piece,
  }));
}

/** A stable pseudo logprob in (-5, 0) for a token at a position. */
export function toyLogprob(token: ToyToken, position: number): number {
  return -((hash(`${token.id}:${position}`) % 5000) + 1) / 1000;
}

export interface ToyMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** What an assistant turn's completion holds: its text, then each tool call. */
export function assistantBody(message: { content?: unknown; tool_calls?: unknown }): string {
  let body = typeof message.content === 'string' ? message.content : '';
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) {
      body += `<tool_call>${JSON.stringify({ name: call.function?.name, arguments: call.function?.arguments })}</tool_call>`;
    }
  }
  return body;
}

function messageTokens(message: ToyMessage): number[] {
  const role = ROLE_IDS[message.role] ?? ROLE_IDS.user!;
  const body =
    message.role === 'assistant'
      ? assistantBody(message)
      : typeof message.content === 'string'
        ? message.content
        : JSON.stringify(message.content ?? '');
  const tail = message.role === 'tool' ? `\n[${String(message.tool_call_id ?? '')}]` : '';
  return [IM_START, role, NEWLINE, ...toyTokenize(body + tail).map((t) => t.id), IM_END, NEWLINE];
}

/** The prompt ids of a request: tools (as JSON, in the system part), every message, then the assistant header. */
export function toyPromptIds(messages: readonly ToyMessage[], tools: unknown): number[] {
  const ids: number[] = [];
  if (tools !== undefined)
    ids.push(
      IM_START,
      ROLE_IDS.system!,
      NEWLINE,
      ...toyTokenize(JSON.stringify(tools)).map((t) => t.id),
      IM_END,
      NEWLINE,
    );
  for (const message of messages) ids.push(...messageTokens(message));
  ids.push(IM_START, ROLE_IDS.assistant!, NEWLINE);
  return ids;
}

/** The completion of an assistant reply: its body's tokens, then the end-of-message token. */
export function toyCompletionTokens(reply: { content?: unknown; tool_calls?: unknown }): ToyToken[] {
  return [...toyTokenize(assistantBody(reply)), { id: IM_END, text: '<|im_end|>' }];
}
