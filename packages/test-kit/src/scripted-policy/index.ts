export { CONTEXT_OVERFLOW_ERRORS, startScriptedPolicyServer } from './scripted-policy-server.js';
export type {
  PolicyScript,
  RecordedPolicyRequest,
  ScriptedAttempt,
  ScriptedToolCall,
  ScriptedPolicyServer,
} from './scripted-policy-server.js';
export { toyCompletionTokens, toyPromptIds } from './toy-tokenizer.js';
