/** Test and demo kits (never imported by shipped code): needs, fixtures, seeded random, wire and policy servers. */
export { commandNeed, describeWith, isCi, itWith, systemProgramNeed } from './needs.js';
export type { Need } from './needs.js';
export { memorySink } from './memory-sink.js';
export { resultFixture, rewardedResult } from './result-fixture.js';
export { seededRandom } from './seeded-random.js';
export { CONTEXT_OVERFLOW_ERRORS, startScriptedPolicyServer } from './scripted-policy/scripted-policy-server.js';
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
} from './scripted-policy/scripted-policy-server.js';
export { assistantBody, toyCompletionTokens, toyLogprob, toyPromptIds, toyTokenize } from './scripted-policy/toy-tokenizer.js';
export type { ToyMessage, ToyToken } from './scripted-policy/toy-tokenizer.js';
export { jsonOf, sendJson, startWireServer } from './wire-test-server.js';
export type { RecordedRequest, WireHandler, WireServer } from './wire-test-server.js';
export { CLIPPED_NOTE, makeScratch, runPython, runShell, runSweAgent, runTool, specBlock } from './tool-bundle-harness.js';
export type { Scratch } from './tool-bundle-harness.js';
