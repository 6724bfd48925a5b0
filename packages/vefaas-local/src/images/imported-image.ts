/**
 * An imported image on disk. `rollout-fleet images import` (import-image.ts) unpacks a container image once into
 *
 *   <imagesDir>/.imported/<digest hex>/rootfs/                     the image's root file system (shared, read-only)
 *   <imagesDir>/.imported/<digest hex>/rollout-fleet-image.json    what a container runtime takes from the config
 *   <imagesDir>/.imported/names/<name> → ../<digest hex>           the name CreateSandbox's image resolves to
 *
 * The cache is keyed by the manifest digest: two names of one image share one tree. A directory image (a
 * directory of repository files, today's kind) never has the record file, so the two kinds cannot be confused.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

export const IMPORTED_DIR = '.imported';
export const NAMES_DIR = 'names';
export const IMPORTED_RECORD = 'rollout-fleet-image.json';

/** What the sandbox takes from the image's config (OCI image-spec `config`), plus where it came from. */
export interface ImportedImage {
  /** The entry directory `<imagesDir>/.imported/<hex>`. */
  dir: string;
  rootfs: string;
  /** `sha256:…` of the image manifest. */
  digest: string;
  /** `sha256:…` of the config blob (Docker's image id). */
  configDigest: string;
  /** `KEY=VALUE` entries, in the image's order. */
  env: string[];
  /** Empty = `/`. */
  workingDir: string;
  /** `uid`, `uid:gid`, `name` or `name:group`; empty = root. */
  user: string;
  /** What was imported, as given (for people). */
  source: string;
  /** Bytes of the unpacked tree when it was imported. */
  bytes: number;
  importedAt: string;
}

export interface ImportedRecord extends Omit<ImportedImage, 'dir' | 'rootfs'> {
  format: 'oci-rootfs/1';
}

/** The imported image at `dir` (an entry directory), or null when `dir` is not one. */
export function readImportedImage(dir: string): ImportedImage | null {
  let text: string;
  try {
    text = readFileSync(join(dir, IMPORTED_RECORD), 'utf8');
  } catch {
    return null;
  }
  let record: Partial<ImportedRecord>;
  try {
    record = JSON.parse(text) as Partial<ImportedRecord>;
  } catch {
    return null; // a record cut short (a crash mid-write) is no image; import again
  }
  if (record.format !== 'oci-rootfs/1' || typeof record.digest !== 'string') return null;
  return {
    dir,
    rootfs: join(dir, 'rootfs'),
    digest: record.digest,
    configDigest: record.configDigest ?? '',
    env: Array.isArray(record.env) ? record.env.filter((e): e is string => typeof e === 'string') : [],
    workingDir: typeof record.workingDir === 'string' ? record.workingDir : '',
    user: typeof record.user === 'string' ? record.user : '',
    source: record.source ?? '',
    bytes: record.bytes ?? 0,
    importedAt: record.importedAt ?? '',
  };
}

/** The entry directory a name of `imagesDir` points to, or null when no image was imported under it. */
export function importedEntryFor(imagesDir: string, name: string): string | null {
  try {
    const entry = realpathSync(join(imagesDir, IMPORTED_DIR, NAMES_DIR, name));
    return readImportedImage(entry) === null ? null : entry;
  } catch {
    return null;
  }
}

/** Every name of `imagesDir` with the image it points to, by name. */
export async function listImportedImages(imagesDir: string): Promise<Array<{ name: string; image: ImportedImage }>> {
  const { readdir } = await import('node:fs/promises');
  const names = await readdir(join(imagesDir, IMPORTED_DIR, NAMES_DIR)).catch(() => []);
  const out: Array<{ name: string; image: ImportedImage }> = [];
  for (const name of names.filter((n) => !n.endsWith('.tmp')).sort()) {
    const entry = importedEntryFor(imagesDir, name);
    const image = entry === null ? null : readImportedImage(entry);
    if (image !== null) out.push({ name, image });
  }
  return out;
}
