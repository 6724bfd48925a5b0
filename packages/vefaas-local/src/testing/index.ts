/** Test helpers of vefaas-local for other packages' tests (not part of what ships): `@rollout-fleet/vefaas-local/testing`. */
export { bwrapNeed } from './bwrap-need.js';
export { SWEREX_CONFORMANCE_FACETS, describeSwerexConformance, dispatcherTarget } from './swerex-conformance/index.js';
export type { SwerexConformanceFacet, SwerexConformanceTarget } from './swerex-conformance/index.js';
