/**
 * Reusable SWE-ReX 1.4 server conformance suite (swerex-protocol.md §9, server checklist), split by facet.
 * Call a facet (or all of them) inside a vitest file; `getTarget` is read lazily, so a `beforeAll` may create
 * the server. The same suite runs directly over a sandbox's UNIX socket and through the gateway.
 *
 * Every facet uses fresh session names and /tmp paths, so facets can share one server. The `/close` test
 * closes every shell that exists at that moment; run facets sequentially (vitest's default within a file).
 */
import { errorsFacet } from './errors-facet.js';
import { filesFacet } from './files-facet.js';
import { httpFacet } from './http-facet.js';
import { sessionFacet } from './session-facet.js';
import type { SwerexConformanceTarget } from './target.js';

export const SWEREX_CONFORMANCE_FACETS = {
  http: httpFacet,
  errors: errorsFacet,
  session: sessionFacet,
  files: filesFacet,
} as const;
export type SwerexConformanceFacet = keyof typeof SWEREX_CONFORMANCE_FACETS;

export function describeSwerexConformance(
  getTarget: () => SwerexConformanceTarget,
  facets: readonly SwerexConformanceFacet[] = ['http', 'errors', 'session', 'files'],
): void {
  for (const facet of facets) SWEREX_CONFORMANCE_FACETS[facet](getTarget);
}

export { dispatcherTarget, socketTarget } from './target.js';
export type { DispatcherTargetOptions, SwerexConformanceTarget, SwerexReply, SwerexRequest } from './target.js';
export { RexCaller } from './rex-caller.js';
export { storedZip, multipartBody } from './stored-zip.js';
