/**
 * Image name → template directory. A local "image" is a directory whose contents become /testbed.
 *
 * Rules:
 * - `file:/abs/path` → that directory.
 * - anything else → `<imagesDir>/<name>` where name = the last `/`-separated component without `@digest` and
 *   `:tag`; e.g. `enterprise-public-cn-beijing.cr.volces.com/swe-bench-verified/sweb.eval.x86_64.django_1776_django-11099:v2`
 *   → `<imagesDir>/sweb.eval.x86_64.django_1776_django-11099`.
 * - an image imported under that name (`rollout-fleet images import`, see images/imported-image.ts) wins over a
 *   directory of that name: the entry directory of the unpacked image is returned.
 * An unknown image throws RolloutError `SANDBOX_START_FAILED` with `details.errorCode = 'function_initialize_failed'`:
 * the control plane reports the sandbox as `Status: Failed`, `ErrorCode: function_initialize_failed`.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { RolloutError } from '@rollout-fleet/shared';
import { importedEntryFor } from '../images/imported-image.js';

export const IMAGE_NOT_FOUND_ERROR_CODE = 'function_initialize_failed';

export function imageTemplateName(image: string): string {
  const lastComponent = image.trim().split('/').pop() ?? '';
  return lastComponent.split('@')[0]?.split(':')[0] ?? '';
}

export function resolveImage(image: string, imagesDir: string): string {
  let dir: string;
  if (image.startsWith('file:')) {
    dir = image.slice('file:'.length);
    if (!isAbsolute(dir)) throw imageError(image, `file: images need an absolute path, got ${dir}`);
  } else {
    const name = imageTemplateName(image);
    if (name === '' || name === '.' || name === '..') throw imageError(image, 'image name is empty');
    const imported = importedEntryFor(imagesDir, name);
    if (imported !== null) return imported;
    dir = join(imagesDir, name);
  }
  if (!isDirectory(dir)) {
    if (existsSync(`${dir}.tar`))
      throw imageError(
        image,
        `${dir}.tar is not imported yet: rollout-fleet images import ${dir}.tar --name ${basename(dir)}`,
      );
    throw imageError(image, `no template directory ${dir}`);
  }
  // An OCI layout is an image to import, not a directory of repository files.
  if (existsSync(join(dir, 'oci-layout')))
    throw imageError(
      image,
      `${dir} is an OCI layout not imported yet: rollout-fleet images import ${dir} --name ${basename(dir)}`,
    );
  return dir;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function imageError(image: string, why: string): RolloutError {
  return new RolloutError('SANDBOX_START_FAILED', `image ${image} is not available: ${why}`, {
    details: { image, errorCode: IMAGE_NOT_FOUND_ERROR_CODE },
  });
}
