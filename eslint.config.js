import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Connections come from one factory (a single server or a cluster, decided by REDIS_URL): see packages/shared/src/redis/.
const IOREDIS_ONLY_IN_SHARED = {
  name: 'ioredis',
  message:
    'Create Redis connections with createRedis() from @rollout-fleet/shared and type them as RedisClient, so Redis Cluster works everywhere.',
};

const PACKAGES = ['shared', 'sandbox', 'vefaas-local', 'producer', 'worker', 'api', 'test-kit'];
const DEEP_SRC = {
  group: ['**/packages/*/src/**', '../../packages/**', '@rollout-fleet/*/src/**'],
  message: 'Import other packages by their package name.',
};
const TEST_KIT = {
  group: ['@rollout-fleet/test-kit', '@rollout-fleet/test-kit/**'],
  message: 'Test kits are for tests, test/support, bench and the demo only: nothing that ships imports them.',
};
// Each kit is its own entry, so a test loads only what it uses (the whole kit pulls in vefaas-local and the producer).
const KIT_BARREL = {
  name: '@rollout-fleet/test-kit',
  message:
    'The test kit has no barrel: import the kit you use, e.g. @rollout-fleet/test-kit/needs (packages/test-kit/package.json).',
};
// A package's own test fixtures live beside its tests, outside src (e.g. packages/vefaas-local/test/).
const TEST_DIRS = ['test/**'];

/** no-restricted-imports for one package: the packages of ours it may import; its tests may also take the test kit. */
function arrows(dir, allowed, message, { ioredis = false, banned = [] } = {}) {
  const forbidden = PACKAGES.filter((name) => !allowed.includes(name) && `packages/${name}` !== dir);
  const paths = ioredis ? [KIT_BARREL] : [IOREDIS_ONLY_IN_SHARED, KIT_BARREL];
  const own = {
    group: forbidden
      .filter((name) => name !== 'test-kit')
      .flatMap((name) => [`@rollout-fleet/${name}`, `@rollout-fleet/${name}/**`]),
    message,
  };
  const tests = [`${dir}/**/*.test.ts`, ...TEST_DIRS.map((glob) => `${dir}/${glob}`)];
  return [
    {
      files: [`${dir}/**/*.ts`],
      ignores: tests,
      rules: { 'no-restricted-imports': ['error', { paths, patterns: [DEEP_SRC, own, TEST_KIT, ...banned] }] },
    },
    { files: tests, rules: { 'no-restricted-imports': ['error', { paths, patterns: [DEEP_SRC, own, ...banned] }] } },
  ];
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'artifacts/**', 'bench/out/**', '**/*.py'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [IOREDIS_ONLY_IN_SHARED, KIT_BARREL], patterns: [DEEP_SRC] }],
    },
  },
  // The arrows between packages (docs/architecture.md): shared ← sandbox ← worker ← api; producer and vefaas-local
  // take shared (and sandbox for the tool vocabulary and the veFaaS signature); test kits only in tests and dev tools.
  ...arrows('packages/shared', [], 'shared imports nothing of ours.', { ioredis: true }),
  ...arrows('packages/sandbox', ['shared'], 'sandbox imports only @rollout-fleet/shared.'),
  ...arrows(
    'packages/vefaas-local',
    ['shared', 'sandbox'],
    'vefaas-local imports only shared and sandbox (the signature it verifies).',
  ),
  ...arrows(
    'packages/producer',
    ['shared', 'sandbox'],
    'The producer imports only shared and sandbox (the tool vocabulary of recordings), never the worker.',
  ),
  ...arrows('packages/worker', ['shared', 'sandbox'], 'The worker imports only shared and sandbox.', {
    // HTTP surfaces (API, dashboard) live in the API package; the worker's health endpoint is plain node:http.
    banned: [
      { group: ['express', '@bull-board/*'], message: 'HTTP surfaces (API, dashboard) live in @rollout-fleet/api.' },
    ],
  }),
  ...arrows(
    'packages/api',
    ['shared', 'sandbox', 'producer', 'worker'],
    "The API imports shared, sandbox, producer and worker (vefaas-local only in tests, through the CLI's target).",
  ),
  ...arrows(
    'packages/test-kit',
    ['shared', 'sandbox', 'vefaas-local', 'producer'],
    'The test kit imports shared, sandbox, vefaas-local and producer (never the worker or the API, whose tests use it).',
  ),
  {
    // What ships never reaches the test kit; the demo (cli/demo*.ts), tests, test/support and bench may.
    files: ['cli/**/*.ts'],
    ignores: ['cli/demo*.ts', 'cli/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [IOREDIS_ONLY_IN_SHARED, KIT_BARREL], patterns: [DEEP_SRC, TEST_KIT] },
      ],
    },
  },
);
