/**
 * What counts as test code, which neither the Docker image nor the CLI bundle may hold: test files, the test kits
 * (packages/test-kit, a package's own test/ folder, the kits still in a package's src), fixtures, the tests'
 * and benchmarks' folders. Paths relative to the checkout, with `/`.
 */
const TEST_FILE = /\.test\.ts$/;
const TEST_FOLDER = /^(test|bench|packages\/test-kit|packages\/[^/]+\/test)\/|(^|\/)fixtures\//;
// Kits not yet moved out of a package's src (issue 25 moves them to packages/test-kit).
const KIT_IN_SRC =
  /^packages\/[^/]+\/src\/(.+\/)?((testing|scripted-policy|swerex-conformance)\/|(test-kit|test-sink|wire-test-server|tool-bundle-harness)\.ts$)/;

export function isTestCode(path: string): boolean {
  // The test kit's manifest is not test code: the Dockerfile's `npm ci` needs every workspace's package.json.
  if (path === 'packages/test-kit/package.json') return false;
  return TEST_FILE.test(path) || TEST_FOLDER.test(path) || KIT_IN_SRC.test(path);
}
