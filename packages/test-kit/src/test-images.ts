/**
 * Real container images built here for the image-sandbox tests and the images benchmark: a static busybox
 * (Debian's busybox-static, /bin/busybox) as the base, optionally with the host's bash and a Python copied in
 * at paths of the image's own (/opt/py), assembled layer by layer with umoci (`init/new/unpack/repack/config`,
 * so deletions become real whiteouts) into an OCI layout, and converted by skopeo into a `docker save` archive.
 * Built once per recipe per machine run: the layout is cached under the OS temp dir by a hash of the recipe.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const BUSYBOX = '/bin/busybox';
const TAG = 'test';

export interface TestImageLayer {
  /** Files to write: image path → content (mode 0644, or 0755 when the content starts with `#!`). */
  files?: Record<string, string>;
  /** Symlinks: image path → target. */
  symlinks?: Record<string, string>;
  /** Hard links: image path → existing image path it links to. */
  hardlinks?: Record<string, string>;
  /** Modes to set: image path → mode. */
  modes?: Record<string, number>;
  /** Image paths removed in this layer (whiteouts in the layer tar). */
  remove?: string[];
  /** Bytes of random data written to /pad.bin (a big layer for the benchmark). */
  padBytes?: number;
}

export interface TestImageRecipe {
  /** Cache key part and the archive's reference name. */
  name: string;
  /** The host's /bin/bash and the libraries it links, at the same paths in the image. */
  bash?: boolean;
  /** A copy of the host's Python 3 at /opt/py (binary, standard library, libraries), with pytest and flake8. */
  python?: boolean;
  /**
   * Instead of busybox: a Debian root file system made by `mmdebstrap --variant=minbase` (needs the mmdebstrap
   * package and Debian's mirror; minutes, so for opt-in tests and benchmarks), as the first layer.
   */
  debian?: { suite: string; include: string[] };
  layers?: TestImageLayer[];
  config?: { env?: string[]; workingDir?: string; user?: string };
}

export interface TestImage {
  /** OCI layout directory (image tag `test`). */
  layout: string;
  /** `oci:<layout>:test`. */
  ociRef: string;
  /** `docker save`-format archive of the same image. */
  archive: string;
}

export function testImageToolsMissing(): string | undefined {
  for (const tool of ['umoci', 'skopeo']) {
    if (!existsOnPath(tool)) return `${tool} is not installed (apt-get install ${tool})`;
  }
  if (!existsSync(BUSYBOX)) return 'busybox-static is not installed (/bin/busybox)';
  return undefined;
}

/** Why a `debian` recipe cannot be built here (mmdebstrap missing), or undefined. */
export function debianImageToolsMissing(): string | undefined {
  return (
    testImageToolsMissing() ??
    (existsOnPath('mmdebstrap') ? undefined : 'mmdebstrap is not installed (apt-get install mmdebstrap)')
  );
}

function existsOnPath(tool: string): boolean {
  return (process.env.PATH ?? '/usr/bin:/bin').split(':').some((d) => existsSync(join(d, tool)));
}

const building = new Map<string, Promise<TestImage>>();

export function buildTestImage(recipe: TestImageRecipe): Promise<TestImage> {
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 4, recipe }))
    .digest('hex')
    .slice(0, 16);
  let pending = building.get(key);
  if (pending === undefined) {
    pending = build(recipe, join(tmpdir(), 'rollout-fleet-test-images', `${recipe.name}-${key}`));
    pending.catch(() => building.delete(key));
    building.set(key, pending);
  }
  return pending;
}

async function build(recipe: TestImageRecipe, target: string): Promise<TestImage> {
  const image: TestImage = {
    layout: join(target, 'oci'),
    ociRef: `oci:${join(target, 'oci')}:${TAG}`,
    archive: join(target, 'image.tar'),
  };
  if (existsSync(image.archive)) return image;
  const staging = `${target}.${process.pid}.${Date.now().toString(36)}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await assemble(recipe, staging);
  } catch (err) {
    await execFileAsync('chmod', ['-R', 'u+rwX', staging]).catch(() => undefined);
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  await mkdir(dirname(target), { recursive: true });
  await rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    await rm(staging, { recursive: true, force: true });
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  });
  return image;
}

async function assemble(recipe: TestImageRecipe, staging: string): Promise<void> {
  const layout = join(staging, 'oci');
  const bundle = join(staging, 'bundle');
  const ref = `${layout}:${TAG}`;
  await execFileAsync('umoci', ['init', '--layout', layout]);
  await execFileAsync('umoci', ['new', '--image', ref]);
  const layer = async (write: (rootfs: string) => Promise<void>): Promise<void> => {
    await execFileAsync('umoci', ['unpack', '--rootless', '--image', ref, bundle]);
    await write(join(bundle, 'rootfs'));
    await execFileAsync('umoci', ['repack', '--image', ref, bundle]);
    await execFileAsync('chmod', ['-R', 'u+rwX', bundle]);
    await rm(bundle, { recursive: true, force: true });
  };
  if (recipe.debian !== undefined) {
    const tree = join(staging, 'debian');
    await execFileAsync(
      'mmdebstrap',
      ['--variant=minbase', `--include=${recipe.debian.include.join(',')}`, recipe.debian.suite, tree],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    await execFileAsync('umoci', ['insert', '--image', ref, tree, '/']);
    await execFileAsync('chmod', ['-R', 'u+rwX', tree]);
    await rm(tree, { recursive: true, force: true });
  } else
    await layer(async (rootfs) => {
      await writeBusybox(rootfs, recipe.name);
      if (recipe.bash === true) await copyWithLibraries(rootfs, '/bin/bash', '/bin/bash');
    });
  if (recipe.python === true) await layer((rootfs) => writePython(rootfs));
  for (const spec of recipe.layers ?? []) await layer((rootfs) => applyLayer(rootfs, spec));
  const config = recipe.config ?? {};
  const configArgs = [
    ...(config.env ?? []).flatMap((e) => ['--config.env', e]),
    ...(config.workingDir === undefined ? [] : ['--config.workingdir', config.workingDir]),
    ...(config.user === undefined ? [] : ['--config.user', config.user]),
  ];
  if (configArgs.length > 0) await execFileAsync('umoci', ['config', '--image', ref, ...configArgs]);
  await execFileAsync('skopeo', [
    'copy',
    '--quiet',
    `oci:${ref}`,
    `docker-archive:${join(staging, 'image.tar')}:${recipe.name}:latest`,
  ]);
}

async function writeBusybox(rootfs: string, name: string): Promise<void> {
  for (const dir of ['bin', 'usr/bin', 'etc', 'root', 'tmp', 'testbed'])
    await mkdir(join(rootfs, dir), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await cp(BUSYBOX, join(rootfs, 'bin/busybox'));
  const { stdout } = await execFileAsync(BUSYBOX, ['--list']);
  for (const applet of stdout.split('\n').filter((a) => a !== '' && a !== 'busybox')) {
    await symlink('busybox', join(rootfs, 'bin', applet)).catch(() => undefined);
  }
  await symlink('../../bin/busybox', join(rootfs, 'usr/bin/env'));
  await writeFile(join(rootfs, 'etc/os-release'), `ID=${name}\nPRETTY_NAME="rollout-fleet test image ${name}"\n`);
  await writeFile(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nrunner:x:1234:1234:runner:/home/runner:/bin/sh\n',
  );
  await writeFile(join(rootfs, 'etc/group'), 'root:x:0:\nrunner:x:1234:\n');
  await mkdir(join(rootfs, 'home/runner'), { recursive: true });
}

/** Copies a host binary and every library it links (ldd) to the same paths in the image, plus the loader. */
async function copyWithLibraries(rootfs: string, hostPath: string, imagePath: string): Promise<void> {
  await copyFile(hostPath, join(rootfs, imagePath));
  for (const lib of await linkedLibraries(hostPath)) await copyFile(lib, join(rootfs, lib));
}

async function linkedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await execFileAsync('ldd', [binary]);
  const libs = new Set<string>();
  for (const line of stdout.split('\n')) {
    const arrow = /=>\s+(\/\S+)/.exec(line);
    const bare = /^\s*(\/\S+)\s/.exec(line);
    const path = arrow?.[1] ?? bare?.[1];
    if (path !== undefined) libs.add(path);
  }
  return [...libs];
}

async function copyFile(from: string, to: string): Promise<void> {
  if (existsSync(to)) return;
  await mkdir(dirname(to), { recursive: true });
  await execFileAsync('cp', ['-L', '--preserve=mode', from, to]);
}

/** The host's Python at /opt/py: its own prefix, standard library, pytest and flake8 (in /opt/py/lib/python3/dist-packages). */
async function writePython(rootfs: string): Promise<void> {
  const { stdout } = await execFileAsync('/usr/bin/python3', [
    '-c',
    'import sys,sysconfig;print(sys.version_info[0],sys.version_info[1]);print(sysconfig.get_paths()["stdlib"])',
  ]);
  const [versionLine = '', stdlib = ''] = stdout.trim().split('\n');
  const version = versionLine.replace(' ', '.');
  const prefix = join(rootfs, 'opt/py');
  await copyWithLibraries(rootfs, `/usr/bin/python${version}`, `/opt/py/bin/python${version}`);
  await symlink(`python${version}`, join(prefix, 'bin/python3'));
  await mkdir(join(prefix, 'lib'), { recursive: true });
  await execFileAsync('cp', ['-a', '--no-preserve=ownership', stdlib, join(prefix, 'lib', `python${version}`)]);
  for (const drop of ['test', 'idlelib', 'tkinter', 'ensurepip', 'lib2to3', 'dist-packages', 'site-packages'])
    await rm(join(prefix, 'lib', `python${version}`, drop), { recursive: true, force: true });
  const dynload = join(stdlib, 'lib-dynload');
  const { stdout: modules } = await execFileAsync('ls', [dynload]);
  for (const mod of modules.split('\n').filter((m) => m.endsWith('.so')))
    for (const lib of await linkedLibraries(join(dynload, mod))) await copyFile(lib, join(rootfs, lib));
  const site = join(prefix, 'lib/python3/dist-packages');
  await mkdir(site, { recursive: true });
  // pytest and flake8 with what they import, and their metadata (flake8 finds pyflakes and pycodestyle by entry point).
  const wanted = [
    'pytest',
    '_pytest',
    'pluggy',
    'iniconfig',
    'packaging',
    'py',
    'attr',
    'attrs',
    'flake8',
    'pyflakes',
    'pycodestyle',
    'mccabe',
  ];
  const { stdout: listing } = await execFileAsync('ls', ['/usr/lib/python3/dist-packages']);
  for (const entry of listing.split('\n')) {
    const base = entry.replace(/\.py$/, '').replace(/-[0-9].*\.(egg|dist)-info$/, '');
    if (entry === '' || !wanted.includes(base)) continue;
    await execFileAsync('cp', [
      '-a',
      '--no-preserve=ownership',
      join('/usr/lib/python3/dist-packages', entry),
      join(site, entry),
    ]);
  }
  for (const [tool, module] of [
    ['pytest', 'pytest'],
    ['flake8', 'flake8'],
  ] as const) {
    await writeFile(
      join(prefix, 'bin', tool),
      `#!/opt/py/bin/python3\nimport sys\nfrom ${module} import main\nsys.exit(main())\n`,
      { mode: 0o755 },
    );
  }
  // Debian's python3 adds <prefix>/lib/python3/dist-packages to sys.path; say so for a reader of the image.
  await writeFile(join(prefix, 'README'), 'Python copied from the build host for rollout-fleet tests.\n');
}

async function applyLayer(rootfs: string, spec: TestImageLayer): Promise<void> {
  for (const path of spec.remove ?? []) await rm(join(rootfs, path), { recursive: true, force: true });
  for (const [path, content] of Object.entries(spec.files ?? {})) {
    await mkdir(dirname(join(rootfs, path)), { recursive: true });
    await writeFile(join(rootfs, path), content, { mode: content.startsWith('#!') ? 0o755 : 0o644 });
  }
  for (const [path, target] of Object.entries(spec.symlinks ?? {})) {
    await mkdir(dirname(join(rootfs, path)), { recursive: true });
    await rm(join(rootfs, path), { force: true });
    await symlink(target, join(rootfs, path));
  }
  for (const [path, existing] of Object.entries(spec.hardlinks ?? {}))
    await execFileAsync('ln', [join(rootfs, existing), join(rootfs, path)]);
  for (const [path, mode] of Object.entries(spec.modes ?? {})) await chmod(join(rootfs, path), mode);
  if (spec.padBytes !== undefined && spec.padBytes > 0) {
    // Random (incompressible) bytes written by the shell, not through this process's memory.
    await execFileAsync('sh', ['-c', `head -c ${spec.padBytes} /dev/urandom > "$1"`, 'sh', join(rootfs, 'pad.bin')]);
  }
}
