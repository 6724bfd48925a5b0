/** Test helpers shared by every package's tests (not part of what ships): `@rollout-fleet/shared/testing`. */
export { commandNeed, describeWith, isCi, itWith, systemProgramNeed } from './needs.js';
export type { Need } from './needs.js';
export { memorySink } from '../logging/test-sink.js';
export { resultFixture, rewardedResult } from './result-fixture.js';
export { seededRandom } from './seeded-random.js';
export { readSharedData, sharedDataDir, sharedDataNeed, sharedDataPath } from './shared-data.js';
