/** `@rollout-fleet/shared/scripted-policy`: the scripted OpenAI-compatible policy server (tests, demo, benchmarks). */
export { CONTEXT_OVERFLOW_ERRORS, startScriptedPolicyServer } from './scripted-policy-server.js';
export type {
  ErrorEnvelope,
  PolicyScript,
  RecordedPolicyRequest,
  ScriptContext,
  ScriptDialect,
  ScriptedAttempt,
  ScriptedError,
  ScriptedPolicyServer,
  ScriptedPolicyServerOptions,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedTurn,
} from './scripted-policy-server.js';
export { assistantBody, toyCompletionTokens, toyLogprob, toyPromptIds, toyTokenize } from './toy-tokenizer.js';
export type { ToyMessage, ToyToken } from './toy-tokenizer.js';
