/**
 * An image directory may say where its repository sits: `.rollout-fleet-image.json` = `{"repo_dir": "/abs/path"}`
 * (default `/testbed`, where SWE-bench images keep it). SWE-agent's own runs keep the repository at
 * `/<owner>__<repo>`, and trajectories recorded there name that path in their actions; an image reproducing such a
 * run declares it, and its files are mounted there instead of /testbed. The manifest itself is not part of the
 * repository (image-build.ts leaves it out).
 * `{"auth_token": "X"}`: the image starts SWE-ReX with token X whatever the start command says, as an image whose
 * own entrypoint ignores the Command does; clients holding the command's token are then refused (401).
 * `{"bashrc": "..."}`: the image's /root/.bashrc (SWE-bench images carry one), read by every bash session.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RolloutError } from '@rollout-fleet/shared';
import { JAIL } from './jail-layout.js';

export const IMAGE_MANIFEST = '.rollout-fleet-image.json';

/** Paths the jail itself uses or binds from the host: a repository cannot sit on or under them. */
const RESERVED = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/dev',
  '/tmp',
  '/root',
  '/run',
  '/opt/swerex-local',
];

export interface ImageManifest {
  repoDir: string;
  /** The image's own SWE-ReX token, overriding the start command's. */
  authToken?: string;
  /** The image's /root/.bashrc. */
  bashrc?: string;
}

export function readImageManifest(imageDir: string): ImageManifest {
  let text: string;
  try {
    text = readFileSync(join(imageDir, IMAGE_MANIFEST), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { repoDir: JAIL.testbed };
    throw manifestError(imageDir, (err as Error).message);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw manifestError(imageDir, `not JSON (${(err as Error).message})`);
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const repoDir = fields['repo_dir'] ?? JAIL.testbed;
  if (typeof repoDir !== 'string' || !isUsableRepoDir(repoDir)) {
    throw manifestError(
      imageDir,
      `repo_dir must be an absolute path outside ${RESERVED.join(', ')} without "." or ".." segments, got ${JSON.stringify(repoDir)}`,
    );
  }
  const authToken = fields['auth_token'];
  if (authToken !== undefined && (typeof authToken !== 'string' || !/^\S+$/.test(authToken)))
    throw manifestError(imageDir, 'auth_token must be a non-empty string without spaces');
  const bashrc = fields['bashrc'];
  if (bashrc !== undefined && typeof bashrc !== 'string')
    throw manifestError(imageDir, "bashrc must be a string (the file's text)");
  return { repoDir, ...(authToken === undefined ? {} : { authToken }), ...(bashrc === undefined ? {} : { bashrc }) };
}

export function isUsableRepoDir(path: string): boolean {
  if (!path.startsWith('/') || path === '/' || path.endsWith('/') || /[\0\n\r]/.test(path)) return false;
  if (
    path
      .split('/')
      .slice(1)
      .some((part) => part === '' || part === '.' || part === '..')
  )
    return false;
  return !RESERVED.some((reserved) => path === reserved || path.startsWith(`${reserved}/`));
}

function manifestError(imageDir: string, why: string): RolloutError {
  return new RolloutError('SANDBOX_START_FAILED', `image ${imageDir}: ${IMAGE_MANIFEST}: ${why}`, {
    details: { errorCode: 'function_initialize_failed' },
  });
}
