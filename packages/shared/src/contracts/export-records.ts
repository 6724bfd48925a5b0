/**
 * What a policy episode's result becomes for training (`rollout-fleet results --format openai|training`):
 * - `openai`: the conversation as OpenAI chat messages with the tools schema (SFT data), one record per episode,
 *   shaped so `rollout-fleet submit` reads it back as a replay of the same actions (openai-messages importer);
 * - `training`: step-wise records, one per model turn, with the server's prompt and completion token ids and
 *   logprobs and the episode's reward (SkyRL's step-wise samples, rLLM's traces). Never re-tokenized.
 */
import type { EpisodeResult, IntegrityVerdict } from './result.js';
import type { ChatMessage } from './turn-record.js';
import { expandPromptIds } from './turn-tokens.js';

export interface OpenAiExportRecord {
  run_id: string;
  episode_id: string;
  instance_id: string;
  sample_index: number;
  messages: ChatMessage[];
  tools: Array<Record<string, unknown>>;
  model: string;
  exit_status: string | null;
  resolved: boolean | null;
  reward: number | null;
}

export interface TrainingRecord {
  run_id: string;
  episode_id: string;
  instance_id: string;
  sample_index: number;
  /** RL group: every sample of one (run, episode). */
  group: string;
  turn: number;
  num_turns: number;
  is_last_turn: boolean;
  /** The whole prompt of this turn, as the server tokenized it; null when the server returned no ids. */
  prompt_token_ids: number[] | null;
  completion_token_ids: number[] | null;
  /** One per completion token. */
  logprobs: number[] | null;
  /** This turn's prompt is the previous turn's prompt + completion followed by more: the turns can be merged. */
  extends_previous: boolean;
  finish_reason: string | null;
  model: string | null;
  /** The episode's reward, on every turn (trainers put it on the last token of the last turn). */
  reward: number;
  resolved: boolean | null;
  exit_status: string | null;
  /** The episode's integrity flag (docs/adversarial-grading.md): a trainer may drop `violated` or review `suspect`. */
  integrity: IntegrityVerdict;
}

/** Undefined for replays and failed episodes (no conversation to export). */
export function openAiExportOf(result: EpisodeResult): OpenAiExportRecord | undefined {
  if (result.messages === undefined || result.policy === undefined) return undefined;
  // Reasoning text is recorded per turn, not part of the chat history a model is trained to continue.
  const messages = result.messages.map(({ reasoning_content: _reasoning, ...message }) => message);
  return {
    run_id: result.run_id,
    episode_id: result.episode_id,
    instance_id: result.instance_id,
    sample_index: result.sample_index,
    messages,
    tools: result.policy.tools,
    model: result.policy.model,
    exit_status: result.exit_status ?? null,
    resolved: result.resolved,
    reward: result.reward,
  };
}

/** One record per turn; none for an episode without a reward (failed, or not graded): there is nothing to learn from. */
export function trainingRecordsOf(result: EpisodeResult): TrainingRecord[] {
  const turns = result.turns;
  const reward = result.reward;
  if (turns === undefined || turns.length === 0 || reward === null || result.status !== 'completed') return [];
  const prompts = expandPromptIds(turns);
  return turns.map((turn, index) => ({
    run_id: result.run_id,
    episode_id: result.episode_id,
    instance_id: result.instance_id,
    sample_index: result.sample_index,
    group: `${result.run_id}/${result.episode_id}`,
    turn: turn.index,
    num_turns: turns.length,
    is_last_turn: index === turns.length - 1,
    prompt_token_ids: prompts[index] ?? null,
    completion_token_ids: turn.tokens?.completion_ids ?? null,
    logprobs: turn.logprobs,
    extends_previous: turn.tokens?.extends_previous ?? false,
    finish_reason: turn.finish_reason,
    model: turn.model,
    reward,
    resolved: result.resolved,
    exit_status: result.exit_status ?? null,
    integrity: integrityOf(result),
  }));
}

/** A result's integrity flag; results written before the flag existed read as clean (nothing was checked). */
export function integrityOf(result: EpisodeResult): IntegrityVerdict {
  return result.integrity ?? { verdict: 'clean', reasons: [] };
}
