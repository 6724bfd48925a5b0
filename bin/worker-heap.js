// The V8 heap budget of `rollout-fleet worker`, and the thread that holds the worker to it. Plain JavaScript:
// bin/rollout-fleet.js decides this before any TypeScript is loaded.
//
// Why: V8 sizes a process's heap for its default limit (GBs), letting it grow to ~4× the live heap between
// major collections. A worker at concurrency 1,000 holds ~95 MB live but committed 400+ MB (bench:concurrency).
// A limit set when the heap is created (like `node --max-old-space-size`) keeps it near the live heap, for more
// garbage-collection CPU (see workerHeapBudgetMb); setting V8 flags after start-up cannot change that limit (and
// --heap-growing-percent cost more). Node 20 cannot re-exec a process in place, and a child process would be a second process to
// account for, so the worker runs in a worker thread of this process created with that limit
// (`resourceLimits`); this thread only relays signals and the exit code (~9 MB).
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { parse as parseDotenv } from 'dotenv';

/**
 * Young generation of the budgeted worker, MB: twice V8's default (48), so objects of one in-flight request (alive
 * 50–500 ms) die young instead of being promoted into the smaller old generation. With V8's 48 MB, the 191 MB
 * budget cost the worker ~20 % more CPU per episode in major collections (bench:concurrency at 1,000: 17.5–18.8
 * ms vs 13.7–14.8 ms without a budget); with 96 MB, 12.6–14.2 ms.
 */
export const HEAP_YOUNG_MB = 96;
const FORWARDED_SIGNALS = ['SIGTERM', 'SIGINT'];

function wholeNumber(raw) {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** The variables of `.env` in the working directory, as the configuration reads them (the environment wins). */
export function dotenvOf(path = '.env') {
  try {
    return parseDotenv(readFileSync(path));
  } catch {
    return {};
  }
}

/**
 * MB of old generation for `rollout-fleet worker`, or 0 for V8's own limit (no thread, the default): RF_WORKER_HEAP_MB.
 * Off unless set because it costs the worker CPU and event-loop delay (bench:concurrency at 1,000 with 191 MB: 13.1–15.0
 * ms of CPU per episode vs 11.9–12.0 without, worst window 131–236 ms vs 50–52 ms; RSS 296–298 vs 459–461 MB): an
 * operator trades them knowingly. Also 0 when the user gave `--max-old-space-size` to node (NODE_OPTIONS or a node
 * flag): theirs wins. Decided here, before the heap exists, from the same environment over `.env` the configuration
 * reads; the configuration (where RF_WORKER_HEAP_MB is declared) validates it: an invalid value gives 0 here and the
 * worker then refuses it with the usual message.
 */
export function workerHeapBudgetMb(env = { ...dotenvOf(), ...process.env }, execArgv = process.execArgv) {
  const own = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some((flag) =>
    /^--max[-_]old[-_]space[-_]size\b/.test(flag),
  );
  if (own) return 0;
  const raw = env.RF_WORKER_HEAP_MB;
  return raw === undefined || raw.trim() === '' ? 0 : (wholeNumber(raw) ?? 0);
}

/**
 * Runs `entry` (bin/worker-thread.js) in a worker thread whose old generation is limited to `budgetMb`, with this
 * process's arguments. SIGTERM/SIGINT are passed on (a thread receives no signals); the thread's exit code becomes
 * the process's. A thread that ran out of its budget ends the process with code 1 and says what to change.
 */
export function runInHeapBoundThread(entry, budgetMb, args) {
  const thread = new Worker(entry, {
    argv: args,
    workerData: { heapBudgetMb: budgetMb },
    resourceLimits: { maxOldGenerationSizeMb: budgetMb, maxYoungGenerationSizeMb: HEAP_YOUNG_MB },
  });
  // `rollout-fleet worker --help | head`: the thread's output goes through this thread's stdout (as cli/main.ts).
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const relay = (signal) => thread.postMessage({ signal });
  for (const signal of FORWARDED_SIGNALS) process.on(signal, relay);
  thread.on('message', (message) => {
    // Nothing in the thread handles this signal (e.g. still starting): do what an unhandled signal does.
    if (message?.unhandledSignal) {
      process.removeListener(message.unhandledSignal, relay);
      process.kill(process.pid, message.unhandledSignal);
    }
  });
  thread.on('error', (err) => {
    if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      console.error(
        `worker: out of its ${budgetMb} MB heap budget (RF_WORKER_HEAP_MB): ` +
          "raise RF_WORKER_HEAP_MB, lower the concurrency, or unset it for V8's own limit",
      );
    } else {
      console.error(err);
    }
    process.exitCode = 1;
  });
  thread.on('exit', (code) => {
    for (const signal of FORWARDED_SIGNALS) process.removeListener(signal, relay);
    if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
  });
}
