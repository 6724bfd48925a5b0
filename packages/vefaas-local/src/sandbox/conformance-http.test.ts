/** SWE-ReX server conformance (http facet) against a real bubblewrap sandbox over its UNIX socket. */
import { afterAll, beforeAll } from 'vitest';
import { startTestSandbox, type SandboxFixture } from '../../test/sandbox-fixture.js';
import { bwrapNeed, describeSwerexConformance, describeWith } from '@rollout-fleet/test-kit';

describeWith([bwrapNeed()], 'SWE-ReX conformance (http) in a bubblewrap sandbox', () => {
  let fixture: SandboxFixture;
  beforeAll(async () => {
    fixture = await startTestSandbox();
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  describeSwerexConformance(() => fixture.target, ['http']);
});
