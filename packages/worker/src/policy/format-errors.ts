/**
 * What the model is told when its reply cannot be executed (policy-loop.md §6.9). Parse failures of a call use the
 * tool-call parser's own texts ("Your action could not be parsed properly: …"); these cover the reply as a whole.
 */
export const FORMAT_ERROR_TEXTS = {
  missing:
    'Your last reply did not call a tool. Every reply must contain exactly one tool call (a function call, not a command ' +
    'in backticks or in the text). When you have finished, call the submit tool.',
  missingParallel: 'Your last reply did not call a tool. Every reply must call the bash tool with the command to run.',
  markup:
    'Your last reply contains tool-call markup in its text that could not be read as a tool call. Call tools through the ' +
    'tool-calling interface, with the arguments as one valid JSON object.',
  length:
    'Your last reply was cut off because it reached the output token limit, before a complete tool call. Reply more ' +
    'concisely: one short tool call, without long explanations.',
  notExecuted: 'This tool call was not executed because the reply it belongs to could not be executed as a whole.',
  notExecutedAfterSubmit:
    'This tool call was not executed: the task was submitted by an earlier call of the same reply.',
  notExecutedNoShell: 'This tool call was not executed: an earlier call of the same reply left no shell to run it in.',
} as const;

export function multipleCallsText(count: number): string {
  return `Your last reply contains ${count} tool calls, but exactly one is allowed per reply. None of them was executed; call one tool.`;
}

/** Tool-call markup that a server's parser left in the text (hermes/qwen `<tool_call>`, R2E `<function=`, special tokens). */
const TOOL_CALL_MARKUP = /<tool_call>|<\/tool_call>|<function=|<\|tool_call|<tool_calls?_begin|\[TOOL_CALLS\]/;

export function hasToolCallMarkup(content: string | null): boolean {
  return content !== null && TOOL_CALL_MARKUP.test(content);
}
