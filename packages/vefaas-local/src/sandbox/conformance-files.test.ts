/** SWE-ReX server conformance (files facet) against a real bubblewrap sandbox over its UNIX socket. */
import { afterAll, beforeAll } from 'vitest';
import { startTestSandbox, type SandboxFixture } from '../../test/sandbox-fixture.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { describeSwerexConformance } from '@rollout-fleet/test-kit/swerex-conformance';

describeWith([bwrapNeed()], 'SWE-ReX conformance (files) in a bubblewrap sandbox', () => {
  let fixture: SandboxFixture;
  beforeAll(async () => {
    fixture = await startTestSandbox();
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  describeSwerexConformance(() => fixture.target, ['files']);
});
