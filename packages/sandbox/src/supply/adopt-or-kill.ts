/**
 * A CreateSandbox whose answer never came (timeout, dropped connection, 5xx after the platform may have acted)
 * is not sent again blindly: every retry could add one more sandbox. Each create call carries its own label
 * (`rf-env`), so the platform can be asked what that call made: one usable sandbox is adopted, any others
 * (and any that Failed) are killed. Nothing found means nothing was made yet; should the platform still make
 * it later, its label no longer matches the slot's create in flight and the reaper kills it.
 */
import { AGENT_ENV_LABEL_KEY, type VefaasTarget } from '../agent-env/agent-env.js';
import { coerceError, type Logger } from '@rollout-fleet/shared';

export interface AdoptOutcome {
  /** The sandbox the failed call made, usable (Starting or Ready). */
  adopted?: string;
  /** Extra or failed sandboxes of that call, killed. */
  killed: string[];
}

export async function adoptOrKill(o: {
  target: VefaasTarget;
  label: string;
  logger: Logger;
  adopt: boolean;
}): Promise<AdoptOutcome> {
  const { vefaas, functionId } = o.target;
  const made = await vefaas.listAllSandboxes({ FunctionId: functionId, Metadata: { [AGENT_ENV_LABEL_KEY]: o.label } });
  const usable = made.filter((s) => s.Status === 'Ready' || s.Status === 'Starting');
  const adopted = o.adopt ? usable[0]?.Id : undefined;
  const killed: string[] = [];
  for (const sandbox of made) {
    if (sandbox.Id === adopted || sandbox.Status === 'Terminating') continue;
    try {
      await vefaas.killSandbox({ FunctionId: functionId, SandboxId: sandbox.Id });
      killed.push(sandbox.Id);
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.code !== 'VEFAAS_NOT_FOUND')
        o.logger.warn({ err, sandboxId: sandbox.Id }, 'could not kill a sandbox of a failed create; the reaper will');
    }
  }
  if (adopted || killed.length > 0)
    o.logger.info({ label: o.label, adopted, killed }, 'found what a failed CreateSandbox made');
  return { ...(adopted ? { adopted } : {}), killed };
}
