/** The producer: validates inputs, submits runs, streams results. Only names used outside the package. */
export { submitRun } from './run/submit-run.js';
export { requireRun } from './run/known-run.js';
export { cancelRun } from './run/cancel-run.js';
export { retryFailed } from './run/retry-failed.js';
export { runFinished, streamGroups, streamResults } from './run/stream-results.js';
export { validateInputs } from './validation/validate-inputs.js';
export { samplingWarnings } from './validation/sampling-warnings.js';
export type { ValidationOptions } from './validation/validate-inputs.js';
export { INPUT_FORMATS } from './importers/detect-format.js';
export type { InputFormat } from './importers/detect-format.js';
export { formatLocation, formatProblem, problemsToError } from './validation/problem.js';
export type { RecordLocation } from './validation/problem.js';
export { parseSweBenchInstances } from './importers/swebench-dataset.js';
export { decodeInputFile } from './importers/decode-input.js';
export { imageForInstance } from './importers/image-template.js';
export type { InputFile } from './importers/types.js';
export { formatFieldPath, parseJsonText } from './importers/json-source.js';
