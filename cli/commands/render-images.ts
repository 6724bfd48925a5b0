/**
 * `rollout-fleet render-images`: from a SWE-bench dataset, one sandbox image build context per instance — the
 * instance image plus a SWE-ReX server on port 8000 (the project's standard-library runtime, or the reference
 * swe-rex) — with a build script and the instance → image map. docs/vefaas.md explains the images.
 */
import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { EXIT } from '../exit-codes.js';
import type { SwerexServer } from '../images/render-swebench-images.js';

interface RenderFlags {
  dataset: string;
  out: string;
  server: SwerexServer;
  baseImage: string;
  tag: string;
  instances?: string[];
}

export function registerRenderImages(program: Command): void {
  program
    .command('render-images')
    .description(
      'Write a Dockerfile per SWE-bench instance: its image plus a SWE-ReX server on port 8000, for veFaaS sandboxes.',
    )
    .requiredOption('--dataset <file>', 'SWE-bench dataset (JSON list or JSONL of instances)')
    .requiredOption('--out <dir>', 'directory for the build contexts, build.sh and images.json')
    .addOption(
      new Option(
        '--server <which>',
        "SWE-ReX server: the project's standard-library runtime, or the reference swe-rex from PyPI",
      )
        .choices(['ours', 'reference'])
        .default('ours'),
    )
    .option(
      '--base-image <template>',
      "instance image to build on (placeholders as in submit --image-template); an instance's image_name wins",
      'swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
    )
    .option(
      '--tag <template>',
      'sandbox image to build (where veFaaS pulls from)',
      'rollout-fleet/sweb.sandbox.{instance_id_1776}:latest',
    )
    .option('--instances <ids...>', 'only these instance ids')
    .addHelpText(
      'after',
      '\nThen: sh <out>/build.sh (needs Docker and a registry veFaaS can pull from).\nExit codes: 0 written, 3 invalid dataset or template.',
    )
    .action(async (flags: RenderFlags) => {
      process.exitCode = await renderImages(flags);
    });
}

async function renderImages(flags: RenderFlags): Promise<number> {
  const { formatProblem, imageForInstance, parseSweBenchInstances } = await import('@rollout-fleet/producer');
  const { renderSweBenchImages } = await import('../images/render-swebench-images.js');
  let text: string;
  try {
    text = await readFile(flags.dataset, 'utf8');
  } catch (err) {
    console.error(`render-images: cannot read ${flags.dataset}: ${(err as Error).message}`);
    return EXIT.INVALID_INPUT;
  }
  const { instances, problems } = parseSweBenchInstances({ path: flags.dataset, text });
  if (problems.length > 0) {
    for (const problem of problems) console.error(formatProblem(problem));
    console.error(`render-images: ${problems.length} problem(s) in ${flags.dataset}; nothing written`);
    return EXIT.INVALID_INPUT;
  }
  const wanted = flags.instances ? new Set(flags.instances) : undefined;
  const chosen = instances.filter(({ instance }) => wanted === undefined || wanted.has(instance.instance_id));
  const missing = [...(wanted ?? [])].filter((id) => !instances.some(({ instance }) => instance.instance_id === id));
  if (missing.length > 0) {
    console.error(`render-images: not in ${flags.dataset}: ${missing.join(', ')}`);
    return EXIT.INVALID_INPUT;
  }
  try {
    const summary = await renderSweBenchImages({
      out: flags.out,
      server: flags.server,
      instances: chosen.map(({ instance }) => ({
        instanceId: instance.instance_id,
        baseImage: instance.image_name ?? imageForInstance(instance.instance_id, flags.baseImage),
        tag: imageForInstance(instance.instance_id, flags.tag),
      })),
    });
    console.log(
      `render-images: ${summary.contexts.length} build context(s) in ${flags.out} (SWE-ReX server: ${flags.server})`,
    );
    console.log(`  build and push: sh ${summary.buildScript}\n  images: ${summary.imagesJson}`);
    return EXIT.OK;
  } catch (err) {
    console.error(`render-images: ${(err as Error).message}`);
    return EXIT.INVALID_INPUT;
  }
}
