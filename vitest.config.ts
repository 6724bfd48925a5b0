import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'cli/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    unstubEnvs: true,
    // Finds or starts the Redis every test file uses (see the file).
    globalSetup: ['test/support/global-setup.ts'],
    // Sandboxes and Redis are shared machine resources on a 2-core box: keep file-level parallelism modest.
    maxWorkers: 2,
    // No retries, in CI or here: a test that passes only on its second try is a bug to fix, not to hide.
    retry: 0,
  },
});
