/** The worker: runs episodes from the queue (policy loop, replay, grading). Only names used outside the package. */
export { formatGradingLog, formatStepLog, stepProgress } from './episode/job-progress.js';
export type { EpisodeProgress, StepLogFields } from './episode/job-progress.js';
export { startWorker } from './start-worker.js';
export type { RunningWorker } from './start-worker.js';
export { startHealthServer } from './health/health-server.js';
export type { HealthServer } from './health/health-server.js';
export type { WorkerHealth } from './health/worker-health.js';
export { createWorkerMetrics } from './metrics/worker-metrics.js';
export { aggregateFleetMetrics } from './metrics/metrics-publisher.js';
export { createStepExecutor } from './episode/step-executor.js';
export { toolProfile } from './policy/tool-profiles.js';
export { sweAgentObservation } from './fidelity/agent-view.js';
export { recordingFormatFor } from './fidelity/normalise.js';
export { compareStep, summariseFidelity } from './fidelity/compare.js';
export { checkRedis } from './health/worker-health.js';
export { publishMetrics } from './metrics/metrics-publisher.js';
export { patchPaths, planRestore } from './grading/restore-rules.js';
export type { RestorePlan, RestoreReason } from './grading/restore-rules.js';
