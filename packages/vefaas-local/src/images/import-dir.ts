/**
 * Implicit import: an images directory may hold `docker save` archives (`<name>.tar`) and OCI layouts (a
 * directory `<name>/` with an `oci-layout` file) beside directory images. Each is imported under `<name>` unless
 * that name already points to an import of the same file that is newer than the file.
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { importImage, type ImportProgress, type ImportResult } from './import-image.js';
import { importedEntryFor, readImportedImage } from './imported-image.js';

export interface ImageSourceInDir {
  name: string;
  path: string;
}

/** Archives and OCI layouts directly in `imagesDir`. */
export async function imageSourcesIn(imagesDir: string): Promise<ImageSourceInDir[]> {
  const found: ImageSourceInDir[] = [];
  for (const entry of await readdir(imagesDir, { withFileTypes: true }).catch(() => [])) {
    if (entry.name.startsWith('.')) continue;
    const path = join(imagesDir, entry.name);
    if (entry.isFile() && entry.name.endsWith('.tar')) found.push({ name: entry.name.slice(0, -'.tar'.length), path });
    else if (entry.isDirectory() && existsSync(join(path, 'oci-layout'))) found.push({ name: entry.name, path });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** Sources in `imagesDir` not imported yet (or changed since). */
export async function pendingImports(imagesDir: string): Promise<ImageSourceInDir[]> {
  const pending: ImageSourceInDir[] = [];
  for (const source of await imageSourcesIn(imagesDir)) {
    const entry = importedEntryFor(imagesDir, source.name);
    const image = entry === null ? null : readImportedImage(entry);
    const modified = (await stat(source.path)).mtimeMs;
    const fresh = image !== null && image.source === source.path && Date.parse(image.importedAt) >= modified;
    if (!fresh) pending.push(source);
  }
  return pending;
}

export async function importImagesIn(
  imagesDir: string,
  onProgress?: (source: ImageSourceInDir, progress: ImportProgress) => void,
): Promise<ImportResult[]> {
  const results: ImportResult[] = [];
  for (const source of await pendingImports(imagesDir)) {
    results.push(
      await importImage({
        source: source.path,
        name: source.name,
        imagesDir,
        ...(onProgress === undefined ? {} : { onProgress: (p: ImportProgress) => onProgress(source, p) }),
      }),
    );
  }
  return results;
}
