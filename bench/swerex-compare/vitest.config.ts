import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Only the conformance file, one at a time: facets share one server (see the suite's index).
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['bench/swerex-compare/conformance.swerex.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
