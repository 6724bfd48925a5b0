/**
 * Child process for the parent-death test: launches a sandbox, starts a background job in it, prints
 * `{"pids": [...]}` (every host pid of the sandbox) on one line, then waits to be killed.
 * argv: <stateRoot> <sandboxId> <imageDir>
 */
import { isSwerexAlive } from '../src/sandbox/alive-probe.js';
import { launchSandbox } from '../src/sandbox/launch-sandbox.js';
import { socketTarget } from '@rollout-fleet/test-kit/swerex-conformance';

async function main(): Promise<void> {
  const [stateRoot, sandboxId, imageDir] = process.argv.slice(2) as [string, string, string];
  const sandbox = await launchSandbox({
    sandboxId,
    command: '--auth-token orphan',
    imageDir,
    envs: {},
    memoryMB: 512,
    cpuMilli: 1000,
    network: false,
    isolation: 'bwrap',
    stateRoot,
  });
  while (!(await isSwerexAlive({ socketPath: sandbox.socketPath, authToken: 'orphan', timeoutMs: 500 }))) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const target = socketTarget(sandbox.socketPath, 'orphan');
  // Raw requests: RexCaller asserts with vitest, which is not loaded in this process.
  const post = (path: string, body: unknown) =>
    target.send({
      method: 'POST',
      path,
      headers: { 'x-api-key': 'orphan', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await post('/create_session', { session: 'default', session_type: 'bash' });
  await post('/run_in_session', { session: 'default', command: 'sleep 1000 &', action_type: 'bash' });
  await target.close();
  process.stdout.write(`${JSON.stringify({ pids: await sandbox.listPids() })}\n`);
  setInterval(() => undefined, 60_000);
}

void main();
