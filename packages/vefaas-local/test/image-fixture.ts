/** Test helper: import a test image (test-kit's test-images.ts) into a fresh images dir and start sandboxes of it. */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RexCaller, socketTarget } from '@rollout-fleet/test-kit/swerex-conformance';
import {
  buildTestImage,
  testImageToolsMissing,
  type TestImageLayer,
  type TestImageRecipe,
} from '@rollout-fleet/test-kit/test-images';
import type { Need } from '@rollout-fleet/test-kit/needs';
import { importImage, rmTree, type ImportResult } from '../src/images/import-image.js';
import { launchSandbox } from '../src/sandbox/launch-sandbox.js';
import { resolveImage } from '../src/sandbox/resolve-image.js';
import type { SandboxLaunch, SandboxProcess } from '../src/sandbox/types.js';
import { waitUntilAlive } from './sandbox-fixture.js';

export function imageToolsNeed(): Need {
  return {
    what: 'skopeo, umoci and busybox-static',
    missing: testImageToolsMissing(),
    install: 'sudo apt-get install -y skopeo umoci busybox-static',
  };
}

/** The recipes the image tests share (each built once per machine run). */
export const RECIPES = {
  /** bash, no Python. */
  bare: { name: 'rf-bare', bash: true, config: { env: ['PATH=/usr/bin:/bin', 'IMAGE_VAR=from-image'] } },
  /** bash and a Python of its own at /opt/py with pytest and flake8, first on the image's PATH. */
  python: {
    name: 'rf-python',
    bash: true,
    python: true,
    config: { env: ['PATH=/opt/py/bin:/usr/bin:/bin'], workingDir: '/testbed' },
    layers: [{ files: { '/testbed/test_ok.py': 'def test_ok():\n    assert 1 + 1 == 2\n' } }],
  },
  /** Two layers over `bare`'s: the second deletes, replaces with symlinks and hard links. */
  layered: {
    name: 'rf-layered',
    bash: true,
    config: { env: ['PATH=/usr/bin:/bin'], user: 'runner', workingDir: '/work' },
    layers: <TestImageLayer[]>[
      {
        files: {
          '/data/keep.txt': 'kept\n',
          '/data/gone.txt': 'deleted in layer 2\n',
          '/data/dir/inner.txt': 'deleted with its directory\n',
          '/data/replaced': 'a file, then a symlink\n',
          '/data/again/old.txt': 'gone with the old directory\n',
          '/work/script.sh': '#!/bin/sh\necho from-script\n',
        },
        modes: { '/data/keep.txt': 0o640 },
        hardlinks: { '/data/hard.txt': '/data/keep.txt' },
      },
      {
        // /data/again is deleted and made anew: only the new layer's file is in it (an opaque directory).
        remove: ['/data/gone.txt', '/data/dir', '/data/replaced', '/data/again'],
        files: { '/data/again/new.txt': 'only this\n' },
        symlinks: { '/data/replaced': 'keep.txt', '/data/abs': '/data/keep.txt' },
      },
    ],
  },
  /** busybox only: no bash. */
  noBash: { name: 'rf-nobash' },
} satisfies Record<string, TestImageRecipe>;

export interface ImportedFixture {
  imagesDir: string;
  result: ImportResult;
  cleanup(): Promise<void>;
}

export async function importTestImage(recipe: TestImageRecipe, name = recipe.name): Promise<ImportedFixture> {
  const built = await buildTestImage(recipe);
  const imagesDir = await mkdtemp(join(tmpdir(), 'rf-images-'));
  const result = await importImage({ source: built.archive, name, imagesDir });
  return { imagesDir, result, cleanup: () => rmTree(imagesDir) };
}

export interface ImageSandbox {
  sandbox: SandboxProcess;
  rex: RexCaller;
  close(): Promise<void>;
}

export async function startImageSandbox(
  imagesDir: string,
  image: string,
  overrides: Partial<SandboxLaunch> = {},
  aliveTimeoutMs = 50_000, // a loaded CI machine starts 2-core sandboxes slowly; a real failure shows its log
): Promise<ImageSandbox> {
  const stateRoot = await mkdtemp(join(tmpdir(), 'rf-sb-'));
  const token = randomUUID();
  const sandbox = await launchSandbox({
    sandboxId: `i-${randomUUID().slice(0, 8)}`,
    command: `python3 -m swerex.server --auth-token ${token}`,
    imageDir: resolveImage(image, imagesDir),
    envs: {},
    memoryMB: 1024,
    cpuMilli: 2000,
    network: false,
    isolation: 'bwrap',
    stateRoot,
    ...overrides,
  });
  try {
    await waitUntilAlive(sandbox, aliveTimeoutMs);
  } catch (err) {
    const { readFile } = await import('node:fs/promises');
    const log = await readFile(sandbox.logPath, 'utf8').catch(() => '');
    await sandbox.kill();
    throw new Error(`sandbox did not come up: ${(err as Error).message}\n${log}`);
  }
  const target = socketTarget(sandbox.socketPath, sandbox.authToken);
  return {
    sandbox,
    rex: new RexCaller(target),
    async close() {
      await target.close().catch(() => undefined);
      await sandbox.kill();
      await rmTree(stateRoot);
    },
  };
}
