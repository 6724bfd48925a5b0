/**
 * `submit` checks, before anything is enqueued (a dry run too), that every sandbox image of the run exists where
 * its sandboxes will start. With vefaas-local (the default: no VEFAAS_* cloud settings) the workers embed a host
 * built from this same configuration, and that host resolves an image with `resolveImage` against the images
 * directory — so the check asks exactly that, and names each missing image with where it is used and the closest
 * image that exists. Against real veFaaS nothing can tell a pre-cached public image from a typo in advance; there
 * the first create reports it (SANDBOX_IMAGE_UNAVAILABLE, a configuration error, not retried).
 */
import { readdir } from 'node:fs/promises';
import type { Config, Episode } from '@rollout-fleet/shared';
import type { RecordLocation } from '@rollout-fleet/producer';

export interface MissingImage {
  image: string;
  episodes: number;
  /** Where the first episode using it came from. */
  firstAt: RecordLocation | undefined;
  why: string;
  suggestion: string | undefined;
}

export interface ImageCheck {
  /** Where the images were looked for (for the message), or undefined when nothing could be checked. */
  where: string | undefined;
  missing: MissingImage[];
}

export async function checkImages(
  config: Config,
  episodes: readonly Episode[],
  locations: readonly RecordLocation[],
): Promise<ImageCheck> {
  if (config.vefaas.mode === 'cloud') return { where: undefined, missing: [] };
  const { EXAMPLE_IMAGES_DIR } = await import('../runtime/target.js');
  const { imageTemplateName, listImportedImages, resolveImage } = await import('@rollout-fleet/vefaas-local');
  const { didYouMean } = await import('@rollout-fleet/shared');
  const imagesDir = config.vefaas.imagesDir ?? EXAMPLE_IMAGES_DIR;
  const available = (await readdir(imagesDir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .concat((await listImportedImages(imagesDir)).map((i) => i.name));
  const uses = new Map<string, { episodes: number; firstAt: RecordLocation | undefined }>();
  episodes.forEach((episode, i) => {
    const use = uses.get(episode.sandbox.image) ?? { episodes: 0, firstAt: locations[i] };
    use.episodes += 1;
    uses.set(episode.sandbox.image, use);
  });
  const missing: MissingImage[] = [];
  for (const [image, use] of uses) {
    try {
      resolveImage(image, imagesDir);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const name = imageTemplateName(image);
      missing.push({
        image,
        ...use,
        why,
        suggestion: image.startsWith('file:') ? undefined : didYouMean(name, available),
      });
    }
  }
  return { where: imagesDir, missing };
}
