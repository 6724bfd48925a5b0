/**
 * Test and demo kits, never imported by what ships: needs, fixtures, seeded random, wire and scripted policy servers,
 * the tool-bundle harness.
 */
export { commandNeed, describeWith, isCi, itWith, systemProgramNeed } from './needs.js';
export type { Need } from './needs.js';
export { memorySink } from './memory-sink.js';
export { resultFixture, rewardedResult } from './result-fixture.js';
export { seededRandom } from './seeded-random.js';
export { CONTEXT_OVERFLOW_ERRORS, startScriptedPolicyServer } from './scripted-policy/scripted-policy-server.js';
export type {
  PolicyScript,
  RecordedPolicyRequest,
  ScriptedAttempt,
  ScriptedPolicyServer,
  ScriptedToolCall,
} from './scripted-policy/scripted-policy-server.js';
export { toyCompletionTokens, toyPromptIds } from './scripted-policy/toy-tokenizer.js';
export { jsonOf, sendJson, startWireServer } from './wire-test-server.js';
export type { RecordedRequest, WireHandler, WireServer } from './wire-test-server.js';
export {
  CLIPPED_NOTE,
  makeScratch,
  runPython,
  runShell,
  runSweAgent,
  runTool,
  specBlock,
} from './tool-bundle-harness.js';
export type { Scratch } from './tool-bundle-harness.js';
export { bwrapNeed } from './bwrap-need.js';
export { startStandInWorker } from './stand-in-worker.js';
export type { Execution, StandInHooks, StandInWorker } from './stand-in-worker.js';
export { FORMAT_SPECS, arbitraryFile, inputFileOf, validationOptions } from './adversarial-inputs.js';
export type { Adversity } from './adversarial-inputs.js';
export {
  RexCaller,
  SWEREX_CONFORMANCE_FACETS,
  describeSwerexConformance,
  dispatcherTarget,
  multipartBody,
  socketTarget,
  storedZip,
} from './swerex-conformance/index.js';
export type {
  DispatcherTargetOptions,
  SwerexConformanceFacet,
  SwerexConformanceTarget,
  SwerexReply,
  SwerexRequest,
} from './swerex-conformance/index.js';
export { readSharedData, sharedDataDir, sharedDataNeed, sharedDataPath } from './shared-data.js';
export { TEST_REDIS_URL, capturingLogger, dashboardTestConfig, deletePrefix } from './dashboard-kit.js';
