/**
 * The `tool` label of step metrics takes only names the fleet knows — its tool calls, SWE-agent's bundled tools,
 * and every tool profile's — and `other` for the rest: a tool name comes from episode input (a recording, or a
 * model that invents one), and a label value per invented name would grow the series without bound.
 */
import { SWE_AGENT_BUNDLES, TOOL_PROFILES } from '@rollout-fleet/shared';
import { TOOL_CALL_NAMES, sweAgentToolNames } from '@rollout-fleet/sandbox';
import { toolProfile } from '../policy/tool-profiles.js';

export const OTHER_TOOL = 'other';

const KNOWN = new Set<string>([
  ...TOOL_CALL_NAMES,
  ...sweAgentToolNames(SWE_AGENT_BUNDLES),
  ...TOOL_PROFILES.flatMap((profile) => toolProfile(profile).tools.map((tool) => tool.function.name)),
]);

export function toolLabel(tool: string): string {
  return KNOWN.has(tool) ? tool : OTHER_TOOL;
}
