import { RolloutError } from '@rollout-fleet/shared';

/**
 * Image naming schemes for per-instance images (trajectories-and-grading.md §4.1). Docker repository names cannot
 * contain `__`, so registries spell it `_1776_` (SWE-bench namespace images, the veFaaS mirrors) or `_s_` (SWE-Gym).
 */
const PLACEHOLDERS: Record<string, (instanceId: string) => string> = {
  instance_id: (id) => id,
  instance_id_lower: (id) => id.toLowerCase(),
  instance_id_1776: (id) => id.toLowerCase().replaceAll('__', '_1776_'),
  instance_id_s: (id) => id.toLowerCase().replaceAll('__', '_s_'),
};

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** Names the unknown placeholders of a template, or returns undefined when it is usable. */
export function imageTemplateError(template: string): string | undefined {
  const unknown = [...template.matchAll(PLACEHOLDER)]
    .map((m) => m[1] ?? '')
    .filter((name) => !Object.hasOwn(PLACEHOLDERS, name));
  if (unknown.length === 0) return undefined;
  return `unknown placeholder(s) ${unknown.map((n) => `{${n}}`).join(', ')} in image template "${template}"; use ${Object.keys(
    PLACEHOLDERS,
  )
    .map((n) => `{${n}}`)
    .join(', ')}`;
}

/**
 * Fills an image template for one instance:
 * `imageForInstance('django__django-11099', 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest')`
 * → `swebench/sweb.eval.x86_64.django_1776_django-11099:latest`.
 * Placeholders: `{instance_id}`, `{instance_id_lower}`, `{instance_id_1776}` (lowercased, `__` → `_1776_`),
 * `{instance_id_s}` (lowercased, `__` → `_s_`). A template without placeholders is returned as is.
 * @throws RolloutError INPUT_INVALID for an unknown placeholder.
 */
export function imageForInstance(instanceId: string, template: string): string {
  const error = imageTemplateError(template);
  if (error !== undefined) throw new RolloutError('INPUT_INVALID', error, { details: { template } });
  return template.replace(PLACEHOLDER, (_match, name: string) => {
    const fill = PLACEHOLDERS[name];
    return fill === undefined ? '' : fill(instanceId);
  });
}
