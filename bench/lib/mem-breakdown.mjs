// A preload for bench runs (`--worker-node-options=--import=./bench/lib/mem-breakdown.mjs` in bench:concurrency):
// where the process's RSS is, every 2 s to stderr: V8 heap used/committed per space (new, old, code, large
// objects…), memory outside the heap (external, ArrayBuffers) and the rest of the RSS (node, libuv, sockets'
// native state, malloc), plus open handles by type. Why: the RSS goal is about the whole process; the worker's
// own metric shows only the V8 heap.
import v8 from 'node:v8';
const MB = (n) => (n / 1048576).toFixed(0);
let peak = { rss: 0 };
const line = () => {
  const m = process.memoryUsage();
  const spaces = v8
    .getHeapSpaceStatistics()
    .map((s) => `${s.space_name.replace('_space', '')}=${MB(s.space_used_size)}/${MB(s.physical_space_size)}`)
    .join(' ');
  const handles = {};
  for (const h of process._getActiveHandles?.() ?? [])
    handles[h.constructor?.name ?? '?'] = (handles[h.constructor?.name ?? '?'] ?? 0) + 1;
  const rest = m.rss - m.heapTotal - m.external;
  const text = `rss=${MB(m.rss)} heapUsed=${MB(m.heapUsed)} heapTotal=${MB(m.heapTotal)} external=${MB(m.external)} arrayBuffers=${MB(m.arrayBuffers)} rest=${MB(rest)} | ${spaces} | handles ${JSON.stringify(handles)}`;
  if (m.rss > peak.rss) peak = { rss: m.rss, text };
  return text;
};
setInterval(() => process.stderr.write(`[mem ${process.pid}] ${line()}\n`), 2000).unref();
process.on('exit', () => process.stderr.write(`[mem ${process.pid}] peak: ${peak.text}\n`));
