/**
 * `rollout-fleet images import SOURCE --name NAME`: imports a container image (a `docker save` archive, an OCI
 * layout, or a registry reference skopeo reaches) into vefaas-local's images directory, unpacked once and shared
 * by every sandbox of it. `rollout-fleet images list` shows what is there. docs/vefaas.md explains the images.
 */
import { type Command } from 'commander';
import { EXIT } from '../exit-codes.js';

interface ImportFlags {
  name?: string;
  images?: string;
}

export function registerImages(program: Command): void {
  const images = program
    .command('images')
    .description("vefaas-local's container images: import a docker save archive, an OCI layout or a registry image.");
  images
    .command('import')
    .description('Import a container image once (skopeo copy, then umoci unpack); sandboxes of it share the tree.')
    .argument(
      '<source>',
      'docker save archive (FILE or docker-archive:FILE), OCI layout (DIR, DIR:TAG or oci:DIR:TAG), or docker://REF',
    )
    .option(
      '--name <name>',
      "name CreateSandbox's image resolves to (default: the archive's or layout's file name); a full reference is cut to its last component",
    )
    .option('--images <dir>', 'images directory of vefaas-local (default: $VEFAAS_LOCAL_IMAGES_DIR)')
    .addHelpText(
      'after',
      [
        '',
        'Needs skopeo and umoci (apt-get install skopeo umoci). The unpacked tree is cached by image digest under',
        '<images>/.imported/; files are owned by the user who imports (rootless unpack).',
        'Exit codes: 0 imported, 2 usage, 3 bad source or name, 4 skopeo/umoci missing, 1 the copy or unpack failed.',
      ].join('\n'),
    )
    .action(async (source: string, flags: ImportFlags) => {
      process.exitCode = await importCommand(source, flags);
    });
  images
    .command('list')
    .description('List the imported images of an images directory (name, digest, size).')
    .option('--images <dir>', 'images directory of vefaas-local (default: $VEFAAS_LOCAL_IMAGES_DIR)')
    .action(async (flags: { images?: string }) => {
      process.exitCode = await listCommand(flags);
    });
}

function imagesDirOf(flags: { images?: string }, what: string): string | undefined {
  const dir = flags.images ?? process.env.VEFAAS_LOCAL_IMAGES_DIR;
  if (dir === undefined || dir === '')
    console.error(`images ${what}: say where: --images DIR (or VEFAAS_LOCAL_IMAGES_DIR)`);
  return dir || undefined;
}

async function importCommand(source: string, flags: ImportFlags): Promise<number> {
  const imagesDir = imagesDirOf(flags, 'import');
  if (imagesDir === undefined) return EXIT.USAGE;
  const { ImageImportError, importImage, imageTemplateName } = await import('@rollout-fleet/vefaas-local');
  const { basename } = await import('node:path');
  const name = imageTemplateName(
    flags.name ??
      basename(source.replace(/^(docker-archive|oci|oci-archive|docker):/, '').replace(/\/+$/, '')).replace(
        /\.tar$/,
        '',
      ),
  );
  const started = performance.now();
  const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
  try {
    const result = await importImage({
      source,
      name,
      imagesDir,
      onProgress: (p) => {
        const total = p.totalBytes === undefined ? '' : ` of ${mb(p.totalBytes)}`;
        const verb = p.phase === 'copy' ? 'copying' : 'unpacking';
        console.error(`images import: ${verb} ${mb(p.bytes)}${total} (${(p.elapsedMs / 1000).toFixed(0)} s)`);
      },
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      [
        `imported ${name}: ${result.image.digest}`,
        `  tree: ${result.image.rootfs} (${mb(result.image.bytes)}${result.unpacked ? '' : ', already unpacked: shared'})`,
        `  took ${seconds} s (copy ${(result.copyMs / 1000).toFixed(1)} s, unpack ${(result.unpackMs / 1000).toFixed(1)} s)`,
        `  sandboxes of image ".../${name}[:tag]" now run it (sandbox-host --images ${imagesDir})`,
      ].join('\n'),
    );
    return EXIT.OK;
  } catch (err) {
    console.error(`images import: ${(err as Error).message}`);
    if (err instanceof ImageImportError) {
      if (err.reason === 'tool-missing') return EXIT.UNAVAILABLE;
      if (err.reason === 'bad-input') return EXIT.INVALID_INPUT;
    }
    return EXIT.FAILURE;
  }
}

async function listCommand(flags: { images?: string }): Promise<number> {
  const imagesDir = imagesDirOf(flags, 'list');
  if (imagesDir === undefined) return EXIT.USAGE;
  const { listImportedImages } = await import('@rollout-fleet/vefaas-local');
  const images = await listImportedImages(imagesDir);
  if (images.length === 0) console.log(`no imported images in ${imagesDir}`);
  for (const { name, image } of images)
    console.log(`${name}\t${image.digest}\t${(image.bytes / 1e6).toFixed(0)} MB\t${image.source}`);
  return EXIT.OK;
}
