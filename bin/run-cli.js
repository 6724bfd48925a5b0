// Loads the CLI: the built bundle (dist/cli-bundle/, `npm run build:cli`, also run by `npm ci`) when it is current,
// otherwise the TypeScript sources through tsx, so a fresh clone works and a developer editing TypeScript never runs
// a stale bundle. The bundle is what production runs: under tsx every process also carries tsx's loader thread and
// the transformed sources (~40 MB more RSS for an idle worker).
import { pathToFileURL } from 'node:url';
import { bundleEntry, bundleIsCurrent } from './cli-bundle.js';

export async function runCli() {
  if (bundleIsCurrent()) {
    await import(pathToFileURL(bundleEntry()).href);
    return;
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
