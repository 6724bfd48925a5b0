// A preload for bench runs (`--worker-node-options=--import=./bench/lib/gc-pauses.mjs` in bench:concurrency):
// the process's GC pauses by kind from perf_hooks (count, total, longest, over 20 ms), to stderr every 10 s.
// Why: event-loop delay on a shared machine mixes GC with other load; pause counts and lengths do not.
import { PerformanceObserver, constants } from 'node:perf_hooks';
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incr',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
};
const acc = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const k = kinds[e.detail?.kind ?? e.kind] ?? 'other';
    const a = (acc[k] ??= { n: 0, total: 0, max: 0, over20: 0 });
    a.n++;
    a.total += e.duration;
    a.max = Math.max(a.max, e.duration);
    if (e.duration > 20) a.over20++;
  }
}).observe({ entryTypes: ['gc'] });
setInterval(() => {
  process.stderr.write(
    `[gc ${process.pid}] ` +
      Object.entries(acc)
        .map(([k, a]) => `${k} n=${a.n} total=${a.total.toFixed(0)}ms max=${a.max.toFixed(1)}ms >20ms=${a.over20}`)
        .join(' | ') +
      '\n',
  );
}, 10000).unref();
