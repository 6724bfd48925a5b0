/**
 * One sandbox image recipe per SWE-bench instance: the instance's image plus a SWE-ReX server on port 8000
 * (deploy/images/: the Dockerfile template, the two server blocks, the runtime installer). Each instance gets
 * a self-contained build context: `<out>/<instance_id>/Dockerfile` and `swerex-local/` (installer, the
 * `python3 -m swerex.server` shim and, for the project's runtime, its Python files). Also written:
 * `<out>/build.sh` (docker build + push, one instance after another) and `<out>/images.json`
 * (instance_id → sandbox image, what `submit --image-template` or a dataset's image_name should name).
 */
import { chmod, copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const IMAGES_DIR = fileURLToPath(new URL('../../deploy/images/', import.meta.url));
export const RUNTIME_DIR = fileURLToPath(new URL('../../packages/vefaas-local/runtime/', import.meta.url));

export type SwerexServer = 'ours' | 'reference';

export interface RenderInstance {
  instanceId: string;
  /** The image to build on (the SWE-bench instance image). */
  baseImage: string;
  /** The sandbox image to build. */
  tag: string;
}

export interface RenderOptions {
  instances: readonly RenderInstance[];
  out: string;
  server: SwerexServer;
}

export interface RenderSummary {
  contexts: string[];
  buildScript: string;
  imagesJson: string;
}

/** Instance ids become directory names: refuse anything that could leave `out`. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (match, name: string) => values[name] ?? match);
}

async function copyTree(from: string, to: string, keep: (name: string) => boolean = () => true): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (!keep(entry.name)) continue;
    if (entry.isDirectory()) await copyTree(join(from, entry.name), join(to, entry.name), keep);
    else await copyFile(join(from, entry.name), join(to, entry.name));
  }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

export async function renderSweBenchImages(options: RenderOptions): Promise<RenderSummary> {
  const template = await readFile(join(IMAGES_DIR, 'swebench-sandbox.Dockerfile.template'), 'utf8');
  const server = (await readFile(join(IMAGES_DIR, `server-${options.server}.Dockerfile.part`), 'utf8')).trimEnd();
  const noCache = (name: string): boolean => name !== '__pycache__' && !name.endsWith('.pyc');
  const contexts: string[] = [];
  for (const instance of options.instances) {
    if (!SAFE_ID.test(instance.instanceId))
      throw new Error(`instance id ${JSON.stringify(instance.instanceId)} cannot name a directory`);
    const context = join(options.out, instance.instanceId);
    await copyTree(join(IMAGES_DIR, 'swerex-local'), join(context, 'swerex-local'), noCache);
    await chmod(join(context, 'swerex-local', 'install.sh'), 0o755);
    // The reference server comes from PyPI: its context carries only the installer and the shim.
    if (options.server === 'ours')
      await copyTree(
        RUNTIME_DIR,
        join(context, 'swerex-local', 'runtime'),
        (name) => noCache(name) && (name.endsWith('.py') || name === 'README.md'),
      );
    await writeFile(
      join(context, 'Dockerfile'),
      fill(template, { instance_id: instance.instanceId, base_image: instance.baseImage, tag: instance.tag, server }),
    );
    contexts.push(context);
  }
  const buildScript = join(options.out, 'build.sh');
  const lines = options.instances.map(
    (i) => `docker build -t ${shellQuote(i.tag)} ${shellQuote(i.instanceId)} && docker push ${shellQuote(i.tag)}`,
  );
  await writeFile(
    buildScript,
    `#!/bin/sh\n# Builds and pushes every rendered sandbox image (SWE-ReX server: ${options.server}). Run from this directory.\nset -eu\ncd "$(dirname "$0")"\n${lines.join('\n')}\n`,
  );
  await chmod(buildScript, 0o755);
  const imagesJson = join(options.out, 'images.json');
  await writeFile(
    imagesJson,
    `${JSON.stringify(Object.fromEntries(options.instances.map((i) => [i.instanceId, i.tag])), null, 2)}\n`,
  );
  return { contexts, buildScript, imagesJson };
}
