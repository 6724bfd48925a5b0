/** Test helpers of vefaas-local for other packages' tests (not part of what ships): `@rollout-fleet/vefaas-local/testing`. */
export { bwrapNeed } from './bwrap-need.js';
