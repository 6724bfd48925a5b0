/**
 * Wire contract: the `/upload` multipart body (swerex-protocol.md §7.3), as the reference client builds it.
 *   file         file part: a file under its basename, or a directory zipped as `zipped_transfer.zip`
 *                (content type application/zip)
 *   target_path  destination on the server
 *   unzip        "true" | "false" (a directory is always sent with "true": the server extracts it into target_path)
 */
import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { FormData } from 'undici';
import { RolloutError } from '@rollout-fleet/shared';

export interface UploadRequest {
  /** Local file or directory path. */
  source: string;
  /** Destination path in the sandbox (a directory to extract into when a directory or zip is uploaded). */
  targetPath: string;
  /** Extract a zip file on the server. Ignored for directories (always true). @defaultValue false */
  unzip?: boolean;
  /**
   * Zip a directory that rarely changes (the tool bundle) once and reuse the bytes for later uploads (every
   * sandbox gets the tools; zipping was the top CPU cost per episode). The directory's listing (paths, sizes,
   * modification times) is compared again at most every `revalidateMs`; when it differs, it is zipped afresh.
   * @defaultValue false
   */
  reuseZip?: boolean;
  /** With `reuseZip`: how long a zip is reused before the directory is compared again. @defaultValue 2000 ms */
  revalidateMs?: number;
}

const DEFAULT_REVALIDATE_MS = 2000;

/** What `/upload` sends: a FormData (undici encodes it), or a multipart body already encoded, with its type. */
export type UploadBody = { body: FormData; contentType?: undefined } | { body: Buffer; contentType: string };

interface CachedZip {
  zip: Promise<Uint8Array>;
  /** The directory's listing the zip was made from. */
  listing: Promise<string>;
  checkedAt: number;
  /** The whole multipart body per target path, encoded once. */
  bodies: Map<string, { body: Buffer; contentType: string }>;
}

const zipped = new Map<string, CachedZip>();

function zipNow(dir: string): CachedZip {
  const listing = listingOf(dir);
  const zip = listing.then(() => zippableTree(dir)).then((tree) => zipSync(tree));
  return { zip, listing, checkedAt: performance.now(), bodies: new Map() };
}

/** The zipped directory, reused while its listing is unchanged. */
async function reusedZip(dir: string, revalidateMs: number): Promise<CachedZip> {
  const cached = zipped.get(dir);
  if (cached !== undefined && performance.now() - cached.checkedAt < revalidateMs) return cached;
  if (cached !== undefined) {
    // One comparison at a time: uploads meanwhile keep using the cached zip.
    cached.checkedAt = performance.now();
    const [then, now] = await Promise.all([cached.listing.catch(() => ''), listingOf(dir)]);
    if (zipped.get(dir) !== cached) return reusedZip(dir, revalidateMs);
    if (then === now) return cached;
  }
  const fresh = zipNow(dir);
  // A failed read must not be remembered.
  fresh.zip.catch(() => {
    if (zipped.get(dir) === fresh) zipped.delete(dir);
  });
  zipped.set(dir, fresh);
  return fresh;
}

export async function buildUploadForm(request: UploadRequest): Promise<UploadBody> {
  // A directory zipped before needs no stat: the cache knows it (and compares its listing now and then).
  const reused = request.reuseZip === true && zipped.has(request.source);
  const info = reused
    ? undefined
    : await stat(request.source).catch((cause: unknown) => {
        throw new RolloutError('INPUT_INVALID', `cannot upload ${request.source}: not readable`, { cause });
      });
  const form = new FormData();
  if (info === undefined || info.isDirectory()) {
    if (request.reuseZip === true) {
      // The same bytes for every sandbox: encoded once into one buffer (sent in one write, not streamed).
      const cached = await reusedZip(request.source, request.revalidateMs ?? DEFAULT_REVALIDATE_MS);
      const zip = await cached.zip;
      let encoded = cached.bodies.get(request.targetPath);
      if (encoded === undefined) {
        encoded = encodeMultipart([
          { name: 'file', filename: 'zipped_transfer.zip', type: 'application/zip', bytes: zip },
          { name: 'target_path', value: request.targetPath },
          { name: 'unzip', value: 'true' },
        ]);
        cached.bodies.set(request.targetPath, encoded);
      }
      return encoded;
    }
    form.append(
      'file',
      new Blob([zipSync(await zippableTree(request.source))], { type: 'application/zip' }),
      'zipped_transfer.zip',
    );
    form.append('target_path', request.targetPath);
    form.append('unzip', 'true');
  } else {
    // openAsBlob streams from disk when sent, so large files are not held in memory (and resends re-read).
    form.append('file', await openAsBlob(request.source), basename(request.source));
    form.append('target_path', request.targetPath);
    form.append('unzip', request.unzip === true ? 'true' : 'false');
  }
  return { body: form };
}

type Part = { name: string; value: string } | { name: string; filename: string; type: string; bytes: Uint8Array };

/** A multipart/form-data body (RFC 7578) of plain-ASCII names, as a FormData of these parts is sent. */
export function encodeMultipart(parts: readonly Part[]): { body: Buffer; contentType: string } {
  const boundary = `----rollout-fleet-${randomBytes(16).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const head =
      'filename' in part
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type}\r\n\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`;
    chunks.push(
      Buffer.from(head, 'utf8'),
      'filename' in part ? Buffer.from(part.bytes) : Buffer.from(part.value, 'utf8'),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The directory's contents as fflate's nested tree; symlinked directories are skipped to avoid cycles. */
async function zippableTree(dir: string): Promise<Zippable> {
  const tree: Zippable = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      tree[entry.name] = await zippableTree(path);
    } else if (entry.isFile() || (entry.isSymbolicLink() && (await stat(path).catch(() => undefined))?.isFile())) {
      tree[entry.name] = new Uint8Array(await readFile(path));
    }
  }
  return tree;
}

/** Every entry under `dir` with its size and modification time, in a stable order: what a zip of it depends on. */
async function listingOf(dir: string, prefix = ''): Promise<string> {
  const lines: string[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isDirectory() && !entry.isSymbolicLink())
      lines.push(`${prefix}${entry.name}/`, await listingOf(path, `${prefix}${entry.name}/`));
    else lines.push(`${prefix}${entry.name} ${info.size} ${info.mtimeMs}`);
  }
  return lines.join('\n');
}
