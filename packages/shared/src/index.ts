export { ERROR_CODES, classOf, isErrorCode, isRetryableCode } from './errors/codes.js';
export type { ErrorCode, FailureClass } from './errors/codes.js';
export { RolloutError } from './errors/rollout-error.js';
export type { RolloutErrorOptions } from './errors/rollout-error.js';
export { coerceError, toFailure } from './errors/coerce.js';
export {
  EpisodeSchema,
  EvalSpecSchema,
  IdSchema,
  LimitsSchema,
  SandboxSpecSchema,
  ToolCallSchema,
  ToolNameSchema,
} from './contracts/episode.js';
export type { Episode, EpisodeInput, EvalSpec, SandboxSpec, ToolCall, ToolName } from './contracts/episode.js';
export {
  AttemptSchema,
  EpisodeResultSchema,
  FailureSchema,
  GradingReportSchema,
  StepRecordSchema,
  TimingsSchema,
} from './contracts/result.js';
export type { Attempt, EpisodeResult, Failure, GradingReport, StepRecord, Timings } from './contracts/result.js';
export { DEFAULT_PREFIX, DEFAULT_QUEUE, createKeyspace, jobIdFor, jobNameFor, parseJobId } from './store/keys.js';
export type { Keyspace } from './store/keys.js';
export { ResultStore } from './store/result-store.js';
export type { CommitOutcome, ResultStoreOptions, StreamedResult } from './store/result-store.js';
export { DEFAULT_JOB_POLICY, jobOptionsFor } from './queue/job-contract.js';
export type { EpisodeJobData, EpisodeJobReturn, JobPolicy } from './queue/job-contract.js';
