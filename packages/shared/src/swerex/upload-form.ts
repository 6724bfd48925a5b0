/**
 * Wire contract: the `/upload` multipart body (swerex-protocol.md §7.3), as the reference client builds it.
 *   file         file part: a file under its basename, or a directory zipped as `zipped_transfer.zip`
 *                (content type application/zip)
 *   target_path  destination on the server
 *   unzip        "true" | "false" (a directory is always sent with "true": the server extracts it into target_path)
 */
import { openAsBlob } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { FormData } from 'undici';
import { RolloutError } from '../errors/rollout-error.js';

export interface UploadRequest {
  /** Local file or directory path. */
  source: string;
  /** Destination path in the sandbox (a directory to extract into when a directory or zip is uploaded). */
  targetPath: string;
  /** Extract a zip file on the server. Ignored for directories (always true). @defaultValue false */
  unzip?: boolean;
  /**
   * The directory does not change while this process runs (the tool bundle): zip it once and reuse the bytes
   * for every later upload (every sandbox gets the tools; zipping was the top CPU cost per episode).
   * @defaultValue false
   */
  reuseZip?: boolean;
}

const zipped = new Map<string, Promise<Uint8Array>>();

function zipDirectory(dir: string, reuse: boolean): Promise<Uint8Array> {
  if (!reuse) return zippableTree(dir).then((tree) => zipSync(tree));
  let bytes = zipped.get(dir);
  if (!bytes) {
    bytes = zippableTree(dir).then((tree) => zipSync(tree));
    // A failed read must not be remembered.
    bytes.catch(() => zipped.delete(dir));
    zipped.set(dir, bytes);
  }
  return bytes;
}

export async function buildUploadForm(request: UploadRequest): Promise<FormData> {
  const info = await stat(request.source).catch((cause: unknown) => {
    throw new RolloutError('INPUT_INVALID', `cannot upload ${request.source}: not readable`, { cause });
  });
  const form = new FormData();
  if (info.isDirectory()) {
    const bytes = await zipDirectory(request.source, request.reuseZip === true);
    form.append('file', new Blob([bytes], { type: 'application/zip' }), 'zipped_transfer.zip');
    form.append('target_path', request.targetPath);
    form.append('unzip', 'true');
  } else {
    // openAsBlob streams from disk when sent, so large files are not held in memory (and resends re-read).
    form.append('file', await openAsBlob(request.source), basename(request.source));
    form.append('target_path', request.targetPath);
    form.append('unzip', request.unzip === true ? 'true' : 'false');
  }
  return form;
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
