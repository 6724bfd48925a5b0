export { startApi } from './start-api.js';
export type { ApiServer, StartApiOptions } from './start-api.js';
export { SessionManager } from './sessions/session-manager.js';
export type { EndReason, SessionManagerOptions, SessionSupply } from './sessions/session-manager.js';
export { renderOpenApi, renderOpenApiText } from './openapi/render-openapi.js';
