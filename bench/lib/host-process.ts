/**
 * vefaas-local in its own child process (host-process-main.ts), as the real cloud is a separate system: the bench's
 * own work (enqueueing a run, following its results) then never delays a CreateSandbox or a step, which an embedded
 * host answers from the bench's event loop. Its figures come over the IPC channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { FaultController, VefaasLocalHandle, VefaasLocalOptions } from '@rollout-fleet/vefaas-local';

/** What workers and clients need to reach the host. */
export type HostInfo = Pick<
  VefaasLocalHandle,
  'controlPlaneUrl' | 'gatewayUrl' | 'functionId' | 'region' | 'accessKeyId' | 'secretAccessKey'
>;

export interface HostStats {
  faults: FaultController['stats'];
  counts: ReturnType<VefaasLocalHandle['sandboxCounts']>;
  usage: ReturnType<VefaasLocalHandle['usage']>;
  /** Epoch ms of the first and the last create the platform admitted (0: none yet), to 20 ms. */
  creates: { first: number; last: number };
}

export type ToHost = { type: 'stats'; id: number } | { type: 'close' };
type FromHost =
  | { type: 'ready'; info: HostInfo }
  | { type: 'stats'; id: number; stats: HostStats }
  | { type: 'closed' }
  | { type: 'failed'; message: string };

export interface HostProcess extends HostInfo {
  readonly pid: number | undefined;
  stats(): Promise<HostStats>;
  /** Kills every sandbox, then the process. */
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('./host-process-main.ts', import.meta.url));

/** `options` must be plain data (it crosses a process boundary): no logger, verifier or clock. */
export async function startHostProcess(options: VefaasLocalOptions): Promise<HostProcess> {
  // fork keeps this process's execArgv: under tsx the child loads TypeScript the same way.
  const child: ChildProcess = fork(MAIN, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, (stats: HostStats) => void>();
  let nextId = 0;
  const exited = once(child, 'exit');
  const info = await new Promise<HostInfo>((resolve, reject) => {
    child.on('message', (message: FromHost) => {
      if (message.type === 'ready') resolve(message.info);
      else if (message.type === 'failed') reject(new Error(`vefaas-local did not start: ${message.message}`));
      else if (message.type === 'stats') {
        pending.get(message.id)?.(message.stats);
        pending.delete(message.id);
      }
    });
    void exited.then(() => reject(new Error('the vefaas-local process exited during start-up')));
  });
  const stats = (): Promise<HostStats> =>
    new Promise((resolve, reject) => {
      if (!child.connected) {
        reject(new Error('the vefaas-local process is gone'));
        return;
      }
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ type: 'stats', id } satisfies ToHost);
    });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'close' } satisfies ToHost);
      await exited;
    })();
    return closing;
  };
  return { ...info, pid: child.pid, stats, close };
}
