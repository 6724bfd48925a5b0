/**
 * Wire contract: how closely a replay reproduced the recorded run (result field `fidelity`). Each replayed step with
 * a recorded observation is compared after the normalisation of docs/fidelity.md; rule set `FIDELITY_RULES`.
 */
import { z } from 'zod';

export const FIDELITY_VERDICTS = ['match', 'differs', 'no_record'] as const;
export type FidelityVerdict = (typeof FIDELITY_VERDICTS)[number];

export const FidelityStepSchema = z.object({
  index: z.number().int().min(0).describe('Index of the step in `steps`.'),
  verdict: z
    .enum(FIDELITY_VERDICTS)
    .describe(
      '`match`: the replayed observation equals the recorded one after normalisation; `differs`: it does not; `no_record`: nothing was recorded.',
    ),
  rules: z
    .array(z.string())
    .optional()
    .describe('Normalisation rules that changed either side before they matched or still differed (docs/fidelity.md).'),
  recorded: z
    .string()
    .optional()
    .describe('`differs` only: the recorded observation as kept (head + marker + tail past the output limit).'),
  diff: z
    .string()
    .optional()
    .describe('`differs` only: unified diff of the normalised texts (`-` recorded, `+` replayed), clipped.'),
});
export type FidelityStep = z.infer<typeof FidelityStepSchema>;

export const FidelitySchema = z.object({
  rules_version: z.string().describe('Version of the normalisation rules the verdicts were reached with.'),
  compared: z.number().int().min(0).describe('Steps with a recorded observation.'),
  matched: z.number().int().min(0).describe('Compared steps whose observations matched.'),
  differed: z.number().int().min(0).describe('Compared steps whose observations differed.'),
  no_record: z.number().int().min(0).describe('Steps without a recorded observation (nothing to compare).'),
  first_divergence: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe('Index of the first step that differs; null when none does.'),
  ratio: z.number().min(0).max(1).nullable().describe('matched / compared; null when nothing was compared.'),
  steps: z.array(FidelityStepSchema).describe('One verdict per replayed step.'),
});
export type Fidelity = z.infer<typeof FidelitySchema>;
