/**
 * Imports a container image once: `skopeo copy` (docker-archive, OCI layout, registry) into a staging OCI layout,
 * then `umoci raw unpack --rootless` of its layers into the cache keyed by the manifest digest (imported-image.ts).
 * The format work is theirs, not ours: skopeo reads every transport and media type Docker and OCI define, and
 * umoci applies layers as the image spec says (whiteouts and opaque directories, hard links, symlinks, modes).
 * Rootless unpacking makes every file owned by the user running the import (see docs/vefaas.md).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  IMPORTED_DIR,
  IMPORTED_RECORD,
  NAMES_DIR,
  readImportedImage,
  type ImportedImage,
  type ImportedRecord,
} from './imported-image.js';

const execFileAsync = promisify(execFile);
const STAGING_TAG = 'img';
const PROGRESS_EVERY_MS = 2000;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

/** Why an import failed: `tool-missing` (install skopeo/umoci), `bad-input` (source or name), `failed` (the copy or unpack). */
export class ImageImportError extends Error {
  constructor(
    readonly reason: 'tool-missing' | 'bad-input' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'ImageImportError';
  }
}

export interface ImportProgress {
  phase: 'copy' | 'unpack';
  /** Bytes written so far in this phase. */
  bytes: number;
  /** Bytes the phase will write when known (the archive's size for a copy of a docker-archive). */
  totalBytes?: number;
  elapsedMs: number;
}

export interface ImportOptions {
  /** `docker-archive:FILE`, `oci:DIR[:TAG]`, `docker://REF`, or a plain path (an archive file or an OCI layout). */
  source: string;
  /** Name CreateSandbox's image resolves to (the last component of a reference, without tag or digest). */
  name: string;
  imagesDir: string;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportResult {
  image: ImportedImage;
  name: string;
  /** False when a tree of this digest was already unpacked (only the name was added). */
  unpacked: boolean;
  copyMs: number;
  unpackMs: number;
}

/** Which tools an import needs and the Debian packages that bring them. */
export const IMPORT_TOOLS = [
  { tool: 'skopeo', pkg: 'skopeo' },
  { tool: 'umoci', pkg: 'umoci' },
] as const;

export async function missingImportTools(): Promise<string[]> {
  const missing: string[] = [];
  for (const { tool } of IMPORT_TOOLS) {
    try {
      await execFileAsync(tool, ['--version']);
    } catch {
      missing.push(tool);
    }
  }
  return missing;
}

/** skopeo's transport:reference for what the user gave. */
export function skopeoSource(source: string): string {
  if (/^(docker-archive|oci|oci-archive|docker|dir):/.test(source)) return source;
  const [path, tag] = splitTag(source);
  let info;
  try {
    info = statSync(path);
  } catch {
    throw new ImageImportError(
      'bad-input',
      `${source}: no such file or directory (give a docker save archive, an OCI layout directory, or docker://REF)`,
    );
  }
  if (info.isFile()) return `docker-archive:${resolve(path)}`;
  if (info.isDirectory() && existsSync(join(path, 'oci-layout')))
    return `oci:${resolve(path)}${tag === undefined ? '' : `:${tag}`}`;
  throw new ImageImportError('bad-input', `${source}: neither an image archive nor an OCI layout (no oci-layout file)`);
}

/** `DIR:TAG` → [DIR, TAG] when DIR exists and the whole string does not. */
function splitTag(source: string): [string, string | undefined] {
  const at = source.lastIndexOf(':');
  if (at <= 0 || existsSync(source)) return [source, undefined];
  const dir = source.slice(0, at);
  const tag = source.slice(at + 1);
  return existsSync(dir) && !tag.includes('/') ? [dir, tag] : [source, undefined];
}

export async function importImage(options: ImportOptions): Promise<ImportResult> {
  const { imagesDir, name } = options;
  if (!NAME.test(name))
    throw new ImageImportError('bad-input', `image name ${JSON.stringify(name)}: letters, digits, _ . - only`);
  const missing = await missingImportTools();
  if (missing.length > 0) {
    throw new ImageImportError(
      'tool-missing',
      `${missing.join(' and ')} not found; install with: apt-get install ${IMPORT_TOOLS.filter((t) =>
        missing.includes(t.tool),
      )
        .map((t) => t.pkg)
        .join(' ')}`,
    );
  }
  const source = skopeoSource(options.source);
  const root = join(imagesDir, IMPORTED_DIR);
  await mkdir(join(root, NAMES_DIR), { recursive: true });
  const staging = join(root, `.staging-${process.pid}-${Date.now().toString(36)}`);
  try {
    const copyStart = performance.now();
    const archiveBytes = source.startsWith('docker-archive:')
      ? fileSize(source.slice('docker-archive:'.length))
      : undefined;
    await runWatched(
      'skopeo',
      ['copy', '--quiet', ...policyArgs(), source, `oci:${staging}:${STAGING_TAG}`],
      staging,
      (bytes, elapsedMs) =>
        options.onProgress?.({
          phase: 'copy',
          bytes,
          elapsedMs,
          ...(archiveBytes === undefined ? {} : { totalBytes: archiveBytes }),
        }),
    );
    const copyMs = performance.now() - copyStart;
    const { digest, config, configDigest } = await readStagedImage(staging);
    const hex = digest.replace(/^sha256:/, '');
    const entry = join(root, hex);
    let unpackMs = 0;
    let unpacked = false;
    if (readImportedImage(entry) === null) {
      const unpackStart = performance.now();
      const building = `${entry}.${process.pid}.tmp`;
      await rm(building, { recursive: true, force: true });
      await mkdir(building, { recursive: true });
      await runWatched(
        'umoci',
        ['raw', 'unpack', '--rootless', '--image', `${staging}:${STAGING_TAG}`, join(building, 'rootfs')],
        join(building, 'rootfs'),
        (bytes, elapsedMs) => options.onProgress?.({ phase: 'unpack', bytes, elapsedMs }),
      );
      const record: ImportedRecord = {
        format: 'oci-rootfs/1',
        digest,
        configDigest,
        env: config.Env ?? [],
        workingDir: config.WorkingDir ?? '',
        user: config.User ?? '',
        source: options.source,
        bytes: await treeBytes(join(building, 'rootfs')),
        importedAt: new Date().toISOString(),
      };
      await writeFile(join(building, IMPORTED_RECORD), JSON.stringify(record, null, 2) + '\n');
      await rename(building, entry).catch(async (err: NodeJS.ErrnoException) => {
        // Another import of the same image finished first: keep theirs.
        await rmTree(building);
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
      unpackMs = performance.now() - unpackStart;
      unpacked = true;
    }
    await pointName(root, name, hex);
    const image = readImportedImage(entry);
    if (image === null) throw new ImageImportError('failed', `${entry}: unpacked image has no record`);
    return { image, name, unpacked, copyMs, unpackMs };
  } finally {
    await rmTree(staging);
  }
}

/** `names/<name>` → `../<hex>`, replaced atomically. */
async function pointName(root: string, name: string, hex: string): Promise<void> {
  const link = join(root, NAMES_DIR, name);
  const temp = `${link}.${process.pid}.tmp`;
  await rm(temp, { force: true });
  await symlink(join('..', hex), temp);
  await rename(temp, link);
}

interface ImageConfig {
  Env?: string[];
  WorkingDir?: string;
  User?: string;
}

async function readStagedImage(layout: string): Promise<{ digest: string; configDigest: string; config: ImageConfig }> {
  const blob = async (digest: string): Promise<unknown> => {
    const [alg, hex] = digest.split(':');
    return JSON.parse(await readFile(join(layout, 'blobs', alg ?? 'sha256', hex ?? ''), 'utf8'));
  };
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as {
    manifests?: Array<{ digest: string; annotations?: Record<string, string> }>;
  };
  const entry = index.manifests?.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === STAGING_TAG);
  if (entry === undefined) throw new ImageImportError('failed', `${layout}: skopeo wrote no manifest`);
  const manifest = (await blob(entry.digest)) as { config?: { digest?: string } };
  const configDigest = manifest.config?.digest;
  if (configDigest === undefined) throw new ImageImportError('failed', `${entry.digest}: manifest without a config`);
  const configBlob = (await blob(configDigest)) as { config?: ImageConfig };
  return { digest: entry.digest, configDigest, config: configBlob.config ?? {} };
}

function policyArgs(): string[] {
  // Without a policy file skopeo refuses every copy; a local file or archive needs no signature policy.
  return existsSync('/etc/containers/policy.json') ? [] : ['--insecure-policy'];
}

function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** Runs a tool, reporting the bytes under `watch` now and then; a failure carries the tool's own words. */
async function runWatched(
  tool: string,
  args: string[],
  watch: string,
  report: (bytes: number, elapsedMs: number) => void,
): Promise<void> {
  const start = performance.now();
  const child = spawn(tool, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let measuring = false;
  const timer = setInterval(() => {
    if (measuring) return;
    measuring = true;
    void treeBytes(watch)
      .then((bytes) => report(bytes, performance.now() - start))
      .finally(() => (measuring = false));
  }, PROGRESS_EVERY_MS);
  try {
    const code = await new Promise<number | null>((resolveExit, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode) => resolveExit(exitCode));
    });
    if (code !== 0) {
      const said = stderr
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .slice(-3)
        .join('; ');
      throw new ImageImportError('failed', `${tool} ${args[0] ?? ''} failed (exit ${code}): ${said || 'no message'}`);
    }
  } finally {
    clearInterval(timer);
  }
}

/** Bytes of regular files under `dir` (0 when it does not exist yet). */
export async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  const walk = async (path: string): Promise<void> => {
    const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) total += (await stat(child).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(dir);
  return total;
}

/** rm -rf that also removes directories a rootless unpack left without write permission. */
export async function rmTree(path: string): Promise<void> {
  if (!existsSync(path)) return;
  await execFileAsync('chmod', ['-R', 'u+rwX', path]).catch(() => undefined);
  await rm(path, { recursive: true, force: true });
}
