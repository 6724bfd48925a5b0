/**
 * A real worker process (startWorker, the host "as the cloud") that kills itself with SIGKILL at chosen
 * points, at random (seeded): right after CreateSandbox answered for an agent sandbox (before the supply
 * records it in its lease), when grading starts (the grading sandbox was created), and right after the result
 * commit (before BullMQ hears the job completed). Test-only: it wraps the target's control-plane client and
 * ResultStore.prototype.commit in this process; nothing of the product changes.
 *
 * Environment: the worker's own (REDIS_URL, RF_*), CHAOS_ENDPOINT / CHAOS_ROUTE / CHAOS_FUNCTION /
 * CHAOS_ACCESS_KEY / CHAOS_SECRET_KEY (the vefaas-local host), CHAOS_SEED, CHAOS_P (kill probability per point).
 */
import { ResultStore, createLogger, loadConfig } from '@rollout-fleet/shared';
import { createVefaasClient, type VefaasTarget } from '@rollout-fleet/sandbox';
import { startWorker } from '@rollout-fleet/worker';

const env = process.env;
let state = Number(env.CHAOS_SEED ?? 1) || 1;
const random = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const p = Number(env.CHAOS_P ?? 0.2);

function maybeDie(point: string): void {
  if (random() >= p) return;
  process.stderr.write(`chaos: SIGKILL at ${point}\n`);
  process.kill(process.pid, 'SIGKILL');
}

const commit = ResultStore.prototype.commit;
ResultStore.prototype.commit = async function (this: ResultStore, ...args: Parameters<typeof commit>) {
  const outcome = await commit.apply(this, args);
  if (outcome.stored) maybeDie('after-commit');
  return outcome;
};

const config = loadConfig({ ...env }, { dotenvPath: false });
const vefaas = createVefaasClient({
  endpoint: env.CHAOS_ENDPOINT as string,
  region: 'cn-beijing',
  credentials: { accessKeyId: env.CHAOS_ACCESS_KEY as string, secretAccessKey: env.CHAOS_SECRET_KEY as string },
});
const create = vefaas.createSandbox.bind(vefaas);
vefaas.createSandbox = async (...args: Parameters<typeof create>) => {
  const created = await create(...args);
  maybeDie(args[0].Metadata?.['rf-role'] === 'eval' ? 'grading' : 'created-before-lease');
  return created;
};
const target: VefaasTarget = {
  vefaas,
  functionId: env.CHAOS_FUNCTION as string,
  gatewayUrl: env.CHAOS_ROUTE as string,
};
const worker = await startWorker({
  config,
  target,
  logger: createLogger({ level: 'warn', format: 'json' }),
  concurrency: 2,
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
