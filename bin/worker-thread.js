// Entry of the heap-bound worker thread (bin/worker-heap.js): signals the main thread passes on are emitted here as
// if this were the process, then the CLI runs as usual (the bundle when current, else tsx).
import { parentPort } from 'node:worker_threads';
import { runCli } from './run-cli.js';

parentPort.on('message', (message) => {
  const signal = message?.signal;
  if (typeof signal !== 'string') return;
  if (process.listenerCount(signal) > 0) process.emit(signal, signal);
  else parentPort.postMessage({ unhandledSignal: signal });
});
// The relay must not keep the thread alive: the worker ends when its work does.
parentPort.unref();
await runCli();
