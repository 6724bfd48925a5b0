import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'cli/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    unstubEnvs: true,
    // Sandboxes and Redis are shared machine resources on a 2-core box: keep file-level parallelism modest.
    maxWorkers: 2,
    retry: process.env.CI ? 1 : 0,
  },
});
