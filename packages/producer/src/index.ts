
export { submitRun } from './run/submit-run.js';
export type { SubmitProgress, SubmitRunOptions, SubmitSummary } from './run/submit-run.js';
export { cancelRun } from './run/cancel-run.js';
export type { CancelSummary } from './run/cancel-run.js';
export { retryFailed } from './run/retry-failed.js';
export { recountRun } from './run/recount.js';
export { streamResults } from './run/stream-results.js';
export type { StreamResultsOptions } from './run/stream-results.js';
