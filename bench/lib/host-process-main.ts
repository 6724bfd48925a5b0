/**
 * Child-process entry of `host-process.ts`: runs vefaas-local with the options given as JSON in argv[2] and answers
 * the parent over the IPC channel.
 *
 * Wire contract (IPC messages, JSON):
 *   child → parent  {type:'ready', info:HostInfo}                       once listening
 *                   {type:'stats', id, stats:HostStats}                 answer to a stats request
 *                   {type:'closed'}                                     every sandbox gone; the child then exits
 *                   {type:'failed', message}                            start-up failed; the child then exits 1
 *   parent → child  {type:'stats', id} | {type:'close'}
 * The parent going away (IPC disconnect) closes the host too, so a killed bench leaves no host behind.
 */
import { startVefaasLocal, type VefaasLocalHandle, type VefaasLocalOptions } from '@rollout-fleet/vefaas-local';
import type { HostInfo, HostStats, ToHost } from './host-process.js';

const send = (message: unknown): void => {
  process.send?.(message);
};

/** How often the first and last admitted create are looked for (the resolution of those two times). */
const EDGE_POLL_MS = 20;

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as VefaasLocalOptions;
  let host: VefaasLocalHandle;
  try {
    host = await startVefaasLocal(options);
  } catch (err) {
    send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
  const creates = { first: 0, last: 0, seen: 0 };
  const edges = setInterval(() => {
    const now = host.faults.stats.createsAdmitted;
    if (now === creates.seen) return;
    creates.seen = now;
    creates.last = Date.now();
    if (creates.first === 0) creates.first = creates.last;
  }, EDGE_POLL_MS);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(edges);
      await host.close();
      // Exits once the parent has the message (nothing else would end this process: the IPC channel holds it).
      if (process.connected) process.send?.({ type: 'closed' }, () => process.exit(0));
      else process.exit(0);
    })();
    return closing;
  };
  process.on('disconnect', () => void close());
  process.on('message', (message: ToHost) => {
    if (message.type === 'close') {
      void close();
      return;
    }
    const stats: HostStats = {
      faults: host.faults.stats,
      counts: host.sandboxCounts(),
      usage: host.usage(),
      creates: { first: creates.first, last: creates.last },
    };
    send({ type: 'stats', id: message.id, stats });
  });
  const info: HostInfo = {
    controlPlaneUrl: host.controlPlaneUrl,
    gatewayUrl: host.gatewayUrl,
    functionId: host.functionId,
    region: host.region,
    accessKeyId: host.accessKeyId,
    secretAccessKey: host.secretAccessKey,
  };
  send({ type: 'ready', info });
}

await main();
