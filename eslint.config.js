import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Connections come from one factory (a single server or a cluster, decided by REDIS_URL): see packages/shared/src/redis/.
const IOREDIS_ONLY_IN_SHARED = {
  name: 'ioredis',
  message: 'Create Redis connections with createRedis() from @rollout-fleet/shared and type them as RedisClient, so Redis Cluster works everywhere.',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'artifacts/**', 'bench/out/**', '**/*.py'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', fetch: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', structuredClone: 'readonly', setImmediate: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [IOREDIS_ONLY_IN_SHARED], patterns: [
        { group: ['**/packages/*/src/**', '../../packages/**', '@rollout-fleet/*/src/**'], message: 'Import other packages by their package name.' },
      ] }],
    },
  },
  {
    // Arrows point toward shared: shared imports no other package of ours; producer and vefaas-local never import worker;
    // only the API imports producer and worker together, and nothing but the CLI and tests imports the API.
    files: ['packages/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@rollout-fleet/*'], message: 'shared imports nothing of ours.' }] }] },
  },
  {
    files: ['packages/producer/**/*.ts', 'packages/vefaas-local/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [IOREDIS_ONLY_IN_SHARED], patterns: [{ group: ['@rollout-fleet/worker', '@rollout-fleet/producer', '@rollout-fleet/vefaas-local', '@rollout-fleet/api'], message: 'Only @rollout-fleet/shared may be imported here.' }] }] },
  },
  {
    files: ['packages/worker/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [IOREDIS_ONLY_IN_SHARED], patterns: [{ group: ['@rollout-fleet/producer', '@rollout-fleet/vefaas-local', '@rollout-fleet/api'], message: 'The worker imports only @rollout-fleet/shared.' }] }] },
  },
  {
    files: ['packages/api/**/*.ts'],
    ignores: ['packages/api/**/*.test.ts', 'packages/api/**/test-kit.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [IOREDIS_ONLY_IN_SHARED], patterns: [{ group: ['@rollout-fleet/vefaas-local', '@rollout-fleet/*/src/**'], message: 'The API imports shared, producer and worker by package name (vefaas-local only in tests, through the CLI\'s target).' }] }] },
  },
);
