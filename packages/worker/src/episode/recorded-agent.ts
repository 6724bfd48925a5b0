/**
 * What replaying an episode needs from the agent that recorded it (episode `tool_bundle`): how its actions become
 * command lines, how the session is set up (repository directory, tools on PATH), what the agent did between
 * steps, and how it turned a command's output into the observation it recorded. Our own tools (no `tool_bundle`)
 * need only the repository directory.
 */
import { RolloutError, coerceError, type Episode, type SweAgentToolBundle, type ToolCall } from '@rollout-fleet/shared';
import { hasV1Submission, sweAgentObservation, type AgentView } from '../fidelity/agent-view.js';
import { recordingFormatFor, type RecordingFormat } from '../fidelity/normalise.js';
import {
  shellQuote,
  sweAgentActionCommand,
  sweAgentActionFor,
  sweAgentSessionCommand,
  sweAgentSetupCommand,
  SwerexRuntimeError,
  setupStatus,
  toolCallToCommand,
  type SetupOutcome,
} from '@rollout-fleet/sandbox';
import type { StepShell, ToCommand } from './step-executor.js';

/** The session operations the set-up needs (AgentEnv provides them). */
export interface AgentSession {
  run(
    command: string,
    options: { timeoutS: number },
  ): Promise<{ output: string; exitCode: number | null; timedOut: boolean }>;
  /** One of our own one-line set-up commands, read from an end marker (AgentEnv.runSetup, session-setup.ts). */
  runSetup(command: string, options: { timeoutS: number }): Promise<SetupOutcome>;
  readFile(path: string): Promise<string>;
}

export interface RecordedAgent {
  readonly toCommand: ToCommand;
  /** How the recording stored observations (for the fidelity comparison). */
  readonly format: RecordingFormat;
  /** Puts the session into the repository and installs the agent's tools (once per sandbox). */
  prepare(session: AgentSession): Promise<void>;
  /**
   * Sets up a new session after the model broke the old one, as `prepare` left the first: in the repository,
   * with the agent's variables and tools on PATH. What lives in files (SWE-agent's registry) stays as it was.
   */
  restore(session: AgentSession): Promise<void>;
  /** What the agent did after each step besides running it (SWE-agent 0.7: `export LAST_ACTION=...`). */
  afterStep(session: AgentSession, call: ToolCall): Promise<void>;
  /** The replayed output as the agent would have recorded it. */
  observation(session: AgentSession, output: string): Promise<AgentView>;
}

const SETUP_TIMEOUT_S = 60;
/** Where SWE-agent 1.x's `submit` writes the patch the agent then reads (HOME is /root in sandboxes). */
export const SWE_AGENT_PATCH_FILE = '/root/model.patch';

/** `cd` into the repository; an unknown outcome (no end marker) throws SESSION_SETUP_AMBIGUOUS (setupStatus). */
async function enterRepoDir(session: AgentSession, repoDir: string): Promise<void> {
  const outcome = await session.runSetup(`cd -- ${shellQuote(repoDir)}`, { timeoutS: SETUP_TIMEOUT_S });
  if (setupStatus(outcome, `entering repo_dir ${repoDir}`) !== 0) {
    throw new RolloutError(
      'REPO_DIR_MISSING',
      `repo_dir ${repoDir} is not a directory in this sandbox: ${outcome.output.trim().slice(0, 300)}`,
      {
        details: { repoDir },
      },
    );
  }
}

async function mustRun(session: AgentSession, command: string, what: string): Promise<void> {
  const outcome = await session.runSetup(command, { timeoutS: SETUP_TIMEOUT_S });
  const status = setupStatus(outcome, what);
  if (status !== 0)
    throw new RolloutError('SANDBOX_START_FAILED', `${what} failed (exit ${status}): ${outcome.output.slice(0, 500)}`);
}

const plain: AgentView['rules'] = [];

function ownTools(episode: Episode): RecordedAgent {
  return {
    toCommand: toolCallToCommand,
    format: recordingFormatFor(undefined),
    prepare: (session) => enterRepoDir(session, episode.repo_dir),
    restore: (session) => enterRepoDir(session, episode.repo_dir),
    afterStep: async () => undefined,
    observation: async (_session, output) => ({ text: output, rules: plain }),
  };
}

function sweAgent(episode: Episode, bundle: SweAgentToolBundle): RecordedAgent {
  const toCommand: ToCommand = (call) => {
    if (call.action !== undefined) return { ok: true, command: sweAgentActionCommand(call.action, bundle.bundles) };
    const action = sweAgentActionFor(call.name, call.arguments, bundle.bundles);
    if (action !== undefined) return { ok: true, command: sweAgentActionCommand(action, bundle.bundles) };
    return toolCallToCommand(call);
  };
  return {
    toCommand,
    format: recordingFormatFor(bundle),
    prepare: async (session) => {
      await enterRepoDir(session, episode.repo_dir);
      await mustRun(session, sweAgentSetupCommand(bundle, episode.repo_dir), 'SWE-agent tool set-up');
    },
    restore: async (session) => {
      await enterRepoDir(session, episode.repo_dir);
      await mustRun(session, sweAgentSessionCommand(bundle, episode.repo_dir), 'SWE-agent session set-up');
    },
    afterStep: async (session, call) => {
      if (bundle.version !== '0.7') return;
      // The 0.7 agent exported the stripped action after every step; the scroll warning reads it.
      const action = (call.action ?? '').trim();
      // Read by its marker, not the exit-code fetch: a stall there would leave the model's session out of step.
      await session.runSetup(`export LAST_ACTION=${shellQuote(action)}`, { timeoutS: SETUP_TIMEOUT_S });
    },
    observation: async (session, output) => {
      const needsFile = !bundle.version.startsWith('0.') && bundle.version !== '1.0-dev' && hasV1Submission(output);
      const patchFile = needsFile ? await session.readFile(SWE_AGENT_PATCH_FILE).catch(() => undefined) : undefined;
      return sweAgentObservation(output, bundle, patchFile);
    },
  };
}

function miniSweAgent(episode: Episode): RecordedAgent {
  return {
    // Each action ran in a fresh `bash -c` in the repository: nothing carries over between steps.
    toCommand: (call) => {
      const converted = toolCallToCommand(call);
      if (!converted.ok) return converted;
      return { ok: true, command: `cd ${shellQuote(episode.repo_dir)} && bash -c ${shellQuote(converted.command)}` };
    },
    format: recordingFormatFor(episode.tool_bundle),
    prepare: (session) => enterRepoDir(session, episode.repo_dir),
    restore: (session) => enterRepoDir(session, episode.repo_dir),
    afterStep: async () => undefined,
    observation: async (_session, output) => ({ text: output, rules: plain }),
  };
}

export function recordedAgentFor(episode: Episode): RecordedAgent {
  const bundle = episode.tool_bundle;
  if (bundle === undefined) return ownTools(episode);
  return bundle.name === 'swe-agent' ? sweAgent(episode, bundle) : miniSweAgent(episode);
}

/** The sandbox operations the step shell needs (AgentEnv provides them). */
export interface RestartableSession extends AgentSession {
  run: StepShell['run'];
  /** A new session set up by us and then by `setup`, fresh sessions tried while a set-up's outcome is unknown. */
  restartSession(options?: { setup?: () => Promise<void> }): Promise<void>;
}

/**
 * The shell steps run in: a session the model broke is replaced by a new one that the recorded agent sets up
 * again (`restore`), so later steps see the same repository directory, variables and tools as before. A new
 * session the sandbox answers for but that cannot be set up (the model deleted the repository, poisoned what a
 * shell reads) is the model's doing: SESSION_RESTART_FAILED. A sandbox that does not answer stays infra.
 */
export function agentShell(session: RestartableSession, agent: RecordedAgent): StepShell {
  return {
    run: (command, options) => session.run(command, options),
    restartSession: async () => {
      // The agent's set-up runs inside the restart, so a session it cannot read is replaced like one ours cannot.
      await session.restartSession({ setup: () => agent.restore(session) }).catch((thrown: unknown) => {
        const err = coerceError(thrown);
        if (err.code === 'SESSION_RESTART_FAILED') throw err;
        const modelSide =
          thrown instanceof SwerexRuntimeError ||
          err.code === 'REPO_DIR_MISSING' ||
          err.code === 'SANDBOX_START_FAILED' ||
          err.code === 'SESSION_SETUP_AMBIGUOUS' ||
          err.class === 'model';
        if (!modelSide) throw err;
        throw new RolloutError(
          'SESSION_RESTART_FAILED',
          `the new bash session could not be set up again: ${err.message}`,
          { cause: thrown },
        );
      });
    },
  };
}
