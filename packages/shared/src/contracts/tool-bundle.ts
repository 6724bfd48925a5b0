/**
 * Wire contract: the tool bundle an episode was recorded with (windowed-tools.md, policy-loop.md §4). Absent = our
 * own tools (`execute_bash`, `str_replace_editor`) in the persistent session. The worker installs what is named here,
 * and the fidelity comparison reads recorded observations the way that agent wrote them.
 */
import { z } from 'zod';

/**
 * SWE-agent release lines whose windowed tools behave differently (windowed-tools.md §1, §11); each name is the
 * first release of its line:
 * - `0.1` v0.1.0–v0.2.x: lint shows every error, old header ("commmand"), no `--isolated`;
 * - `0.3` v0.3.0–v0.5.x: every error shown (a pre-existing error blocks every edit);
 * - `0.6` v0.6.0: as 0.3, observations re-joined by `splitlines`;
 * - `0.6.1` v0.6.1: pre-existing lint errors filtered;
 * - `0.7` v0.7.0: `Usage: open "<file>"`, scroll warning;
 * - `1.0-dev` SWE-agent 1.x development builds (files without `info.swe_agent_version`): tools as 1.0, but the agent
 *   took the submission from `submit`'s stdout, between its two markers (read from the patch file since 7d7e38dc);
 * - `1.0` v1.0.x: Python tools, registry state, `create` writes "\n";
 * - `1.1` v1.1.0: `create` writes an empty file;
 * - `main` SWE-agent main (3ea751c): last line visible, `insert N` after line N, `submit` prints only its marker.
 */
export const SWE_AGENT_VERSIONS = ['0.1', '0.3', '0.6', '0.6.1', '0.7', '1.0-dev', '1.0', '1.1', 'main'] as const;
export type SweAgentVersion = (typeof SWE_AGENT_VERSIONS)[number];

/**
 * SWE-agent bundles we reproduce, by their v1.1 names (v1.0 `defaults`/`edit_linting`/`edit_replace` and v0's
 * `defaults.sh`/`search.sh`/`edit_linting.sh`/`submit.sh` map onto them). `edit_anthropic` is our own
 * `str_replace_editor` and `registry` is built in, so neither is listed.
 */
export const SWE_AGENT_BUNDLES = ['windowed', 'search', 'edit_linting', 'edit_replace', 'submit'] as const;
export type SweAgentBundle = (typeof SWE_AGENT_BUNDLES)[number];

export function isV0(version: SweAgentVersion): boolean {
  return version.startsWith('0.');
}

export const SweAgentToolBundleSchema = z
  .strictObject({
    name: z.literal('swe-agent').describe("SWE-agent's tools (docs/windowed-tools.md)."),
    version: z
      .enum(SWE_AGENT_VERSIONS)
      .describe('The SWE-agent release line the trajectory was recorded with (its tools behave differently).'),
    bundles: z
      .array(z.enum(SWE_AGENT_BUNDLES))
      .describe(
        "Installed in this order; a later bundle's tool wins a name clash (SWE-agent prepends each bundle to PATH).",
      ),
    window: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe('Lines shown by the file window (SWE-agent `WINDOW`).'),
    overlap: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(2)
      .describe('Lines kept when scrolling (SWE-agent `OVERLAP`).'),
    pty_observations: z
      .boolean()
      .default(false)
      .describe(
        'Observations were captured through a pty (SWE-ReX before 1.3): every LF arrived as CRLF and each observation was ' +
          'stripped at both ends. The comparison strips both ends of both sides for such recordings.',
      ),
  })
  .refine((bundle) => !(isV0(bundle.version) && bundle.bundles.includes('edit_replace')), {
    message: 'edit_replace (search/replace edit, insert) exists only from SWE-agent 1.0',
    path: ['bundles'],
  });

export const MiniSweAgentToolBundleSchema = z.strictObject({
  name: z.literal('mini-swe-agent').describe("mini-swe-agent's bash-only tool set."),
  version: z.string().min(1).optional().describe('`mini_version` of the recording (provenance only).'),
});

export const ToolBundleSchema = z.discriminatedUnion('name', [SweAgentToolBundleSchema, MiniSweAgentToolBundleSchema]);
export type ToolBundle = z.infer<typeof ToolBundleSchema>;
export type ToolBundleInput = z.input<typeof ToolBundleSchema>;
export type SweAgentToolBundle = z.infer<typeof SweAgentToolBundleSchema>;
