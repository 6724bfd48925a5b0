/** The HTTP API. Only names used outside the package. */
export { startApi } from './start-api.js';
export type { ApiServer } from './start-api.js';
export { renderOpenApi } from './openapi/render-openapi.js';
