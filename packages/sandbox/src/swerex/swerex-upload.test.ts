import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedDispatchers } from './dispatcher-registry.js';
import { SwerexClient } from './swerex-client.js';
import {
  sendJson,
  startWireServer,
  type RecordedRequest,
  type WireServer,
} from '@rollout-fleet/test-kit/wire-test-server';

let server: WireServer | undefined;
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swerex-upload-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await closeSharedDispatchers();
  await rm(dir, { recursive: true, force: true });
});

async function uploadClient(): Promise<SwerexClient> {
  server = await startWireServer((_req, res) => sendJson(res, 200, {}));
  return new SwerexClient({ baseUrl: server.url, instanceName: 'sb-u', apiKey: 'k' });
}

/** Parses the multipart body the way a server would. */
async function formOf(req: RecordedRequest): Promise<globalThis.FormData> {
  const contentType = req.headers['content-type'] ?? '';
  expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
  return new Response(req.body, { headers: { 'content-type': contentType } }).formData();
}

describe('upload', () => {
  it('sends a file under its basename with unzip=false', async () => {
    const file = join(dir, 'patch.diff');
    await writeFile(file, 'diff --git a/x b/x\n');
    const client = await uploadClient();

    expect(await client.upload({ source: file, targetPath: '/tmp/in/patch.diff' })).toEqual({});

    const [req] = server!.requests;
    expect(req!.url.pathname).toBe('/upload');
    expect(req!.headers['x-api-key']).toBe('k');
    expect(req!.headers['x-faas-instance-name']).toBe('sb-u');
    const form = await formOf(req!);
    const part = form.get('file') as File;
    expect(part.name).toBe('patch.diff');
    expect(await part.text()).toBe('diff --git a/x b/x\n');
    expect(form.get('target_path')).toBe('/tmp/in/patch.diff');
    expect(form.get('unzip')).toBe('false');
  });

  it('zips a directory as zipped_transfer.zip with unzip=true', async () => {
    const src = join(dir, 'tree');
    await mkdir(join(src, 'pkg', 'sub'), { recursive: true });
    await mkdir(join(src, 'empty'));
    await writeFile(join(src, 'top.txt'), 'top');
    await writeFile(join(src, 'pkg', 'sub', 'deep.py'), 'print(1)\n');
    await symlink(join(src, 'top.txt'), join(src, 'link.txt'));
    const client = await uploadClient();

    await client.upload({ source: src, targetPath: '/work/tree' });

    const form = await formOf(server!.requests[0]!);
    const part = form.get('file') as File;
    expect(part.name).toBe('zipped_transfer.zip');
    expect(part.type).toBe('application/zip');
    expect(form.get('target_path')).toBe('/work/tree');
    expect(form.get('unzip')).toBe('true');
    const entries = unzipSync(new Uint8Array(await part.arrayBuffer()));
    const text = (name: string): string => new TextDecoder().decode(entries[name]);
    expect(Object.keys(entries).sort()).toEqual([
      'empty/',
      'link.txt',
      'pkg/',
      'pkg/sub/',
      'pkg/sub/deep.py',
      'top.txt',
    ]);
    expect(text('top.txt')).toBe('top');
    expect(text('link.txt')).toBe('top');
    expect(text('pkg/sub/deep.py')).toBe('print(1)\n');
  });

  it('zips a directory once with reuseZip, zips it afresh once a change is seen, and always afresh without it', async () => {
    const src = join(dir, 'bundle');
    await mkdir(join(src, 'bin'), { recursive: true });
    await writeFile(join(src, 'tool'), 'v1');
    const client = await uploadClient();
    const sent = async (name = 'tool'): Promise<string | undefined> => {
      const form = await formOf(server!.requests.at(-1)!);
      const files = unzipSync(new Uint8Array(await (form.get('file') as File).arrayBuffer()));
      return files[name] === undefined ? undefined : new TextDecoder().decode(files[name]);
    };
    const hour = 3_600_000;
    await client.upload({ source: src, targetPath: '/t', reuseZip: true, revalidateMs: hour });
    expect(await sent()).toBe('v1');
    // The encoded body a reused zip is sent as has the parts the FormData has.
    const form = await formOf(server!.requests.at(-1)!);
    expect([
      (form.get('file') as File).name,
      (form.get('file') as File).type,
      form.get('target_path'),
      form.get('unzip'),
    ]).toEqual(['zipped_transfer.zip', 'application/zip', '/t', 'true']);
    // Within the revalidation interval the zip is reused as it was.
    await writeFile(join(src, 'tool'), 'v2 (longer)');
    await client.upload({ source: src, targetPath: '/t', reuseZip: true, revalidateMs: hour });
    expect(await sent()).toBe('v1');
    // Once the listing is compared again, a changed file (or a new one in a subdirectory) is zipped afresh.
    await client.upload({ source: src, targetPath: '/t', reuseZip: true, revalidateMs: 0 });
    expect(await sent()).toBe('v2 (longer)');
    await writeFile(join(src, 'bin', 'new'), 'new');
    await client.upload({ source: src, targetPath: '/t', reuseZip: true, revalidateMs: 0 });
    expect(await sent('bin/new')).toBe('new');
    // An unchanged listing keeps the zip.
    await client.upload({ source: src, targetPath: '/t', reuseZip: true, revalidateMs: 0 });
    expect(await sent('bin/new')).toBe('new');
    await writeFile(join(src, 'tool'), 'v3 (longest)');
    await client.upload({ source: src, targetPath: '/t' });
    expect(await sent()).toBe('v3 (longest)');
  });

  it('rejects a missing source before sending anything', async () => {
    const client = await uploadClient();
    await expect(client.upload({ source: join(dir, 'nope'), targetPath: '/x' })).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
    expect(server!.requests).toHaveLength(0);
  });
});
