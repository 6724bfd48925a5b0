/**
 * Wire contract: how closely a replay reproduced the recorded run (result field `fidelity`). Each replayed step with
 * a recorded observation is compared after the normalisation of docs/fidelity.md; rule set `FIDELITY_RULES`.
 */
import { z } from 'zod';

export const FIDELITY_VERDICTS = ['match', 'differs', 'no_record'] as const;
export type FidelityVerdict = (typeof FIDELITY_VERDICTS)[number];

export const FidelityStepSchema = z.object({
  /** Index of the step in `steps`. */
  index: z.number().int().min(0),
  verdict: z.enum(FIDELITY_VERDICTS),
  /** Normalisation rules that changed either side before they matched or still differed (docs/fidelity.md). */
  rules: z.array(z.string()).optional(),
  /** `differs` only: the recorded observation as kept (head + marker + tail past the output limit). */
  recorded: z.string().optional(),
  /** `differs` only: unified diff of the normalised texts (`-` recorded, `+` replayed), clipped. */
  diff: z.string().optional(),
});
export type FidelityStep = z.infer<typeof FidelityStepSchema>;

export const FidelitySchema = z.object({
  /** Version of the normalisation rules the verdicts were reached with. */
  rules_version: z.string(),
  /** Steps with a recorded observation. */
  compared: z.number().int().min(0),
  matched: z.number().int().min(0),
  differed: z.number().int().min(0),
  /** Steps without a recorded observation (nothing to compare). */
  no_record: z.number().int().min(0),
  /** Index of the first step that differs; null when none does. */
  first_divergence: z.number().int().min(0).nullable(),
  /** matched / compared; null when nothing was compared. */
  ratio: z.number().min(0).max(1).nullable(),
  steps: z.array(FidelityStepSchema),
});
export type Fidelity = z.infer<typeof FidelitySchema>;
