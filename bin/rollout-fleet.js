#!/usr/bin/env node
// `rollout-fleet <subcommand>`: the CLI (bin/run-cli.js: the built bundle when current, else tsx). `worker` runs in a
// thread with a V8 heap budget (bin/worker-heap.js) when RF_WORKER_HEAP_MB is set.
import { runCli } from './run-cli.js';
import { runInHeapBoundThread, workerHeapBudgetMb } from './worker-heap.js';

const args = process.argv.slice(2);
const budgetMb = args[0] === 'worker' ? workerHeapBudgetMb() : 0;
if (budgetMb > 0) runInHeapBoundThread(new URL('./worker-thread.js', import.meta.url), budgetMb, args);
else await runCli();
