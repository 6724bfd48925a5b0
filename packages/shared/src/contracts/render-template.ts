/**
 * Prompt templates of a policy episode: `{{name}}` placeholders (spaces inside the braces allowed) filled from
 * the episode in one pass, so a problem statement that itself contains `{{…}}` is never expanded again.
 */
import { DEFAULT_TEMPLATES } from './default-templates.js';
import type { Policy, TemplatePlaceholder } from './policy.js';
import { templatePlaceholders } from './policy.js';

export type TemplateValues = Partial<Record<TemplatePlaceholder, string>>;

/** The templates an episode's requests use: its own, else its profile's. */
export function effectiveTemplates(policy: Pick<Policy, 'templates' | 'tool_profile'>): {
  system: string;
  instance: string;
} {
  const defaults = DEFAULT_TEMPLATES[policy.tool_profile];
  return {
    system: policy.templates.system ?? defaults.system,
    instance: policy.templates.instance ?? defaults.instance,
  };
}

/** Placeholders a template uses that `values` cannot fill. */
export function unfilledPlaceholders(template: string, values: TemplateValues): string[] {
  return templatePlaceholders(template).filter((name) => values[name as TemplatePlaceholder] === undefined);
}

export function renderTemplate(template: string, values: TemplateValues): string {
  return template.replace(
    /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g,
    (match, name: string) => values[name as TemplatePlaceholder] ?? match,
  );
}
