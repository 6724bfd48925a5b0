/**
 * SWE-ReX conformance (http, errors facets) THROUGH THE GATEWAY to a real bubblewrap sandbox: what the suite
 * proves over the sandbox's socket must survive the proxy (status codes, 511 bodies, X-Request-ID replay,
 * multipart upload, long commands and interrupts).
 */
import { afterAll, beforeAll } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../../test/gateway-fixture.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { describeSwerexConformance } from '@rollout-fleet/test-kit/swerex-conformance';

describeWith([bwrapNeed()], 'SWE-ReX conformance through the vefaas-local gateway', () => {
  let fixture: GatewayFixture;
  beforeAll(async () => {
    fixture = await startGatewayFixture();
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  describeSwerexConformance(() => fixture.target, ['http', 'errors']);
});
