// A preload for bench runs (`--worker-node-options=--import=./bench/lib/alloc-sampling.mjs` in bench:concurrency):
// V8's sampling heap profiler from ALLOC_SAMPLING_FROM_S to ALLOC_SAMPLING_TO_S seconds after start (default 10–30), keeping
// samples of objects a major collection freed (so: what was promoted to the old generation and died there, plus
// what is still live) but not those a scavenge freed, unless ALLOC_SAMPLING_MINOR=1. Prints the top allocation sites by
// bytes (self, and the nearest frame of this repository's code) to stderr. Why: the old generation's growth
// between major collections is what sets the worker's peak RSS.
import { Session } from 'node:inspector';
const from = Number(process.env.ALLOC_SAMPLING_FROM_S ?? 10) * 1000;
const to = Number(process.env.ALLOC_SAMPLING_TO_S ?? 30) * 1000;
const minor = process.env.ALLOC_SAMPLING_MINOR === '1';
const session = new Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
const short = (url) => url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^file:\/\/.*\/(packages|dist|cli)\//, '$1/');
setTimeout(async () => {
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: minor,
  });
  setTimeout(async () => {
    const { profile } = await post('HeapProfiler.stopSampling');
    const self = new Map();
    const own = new Map();
    let total = 0;
    const walk = (node, stack) => {
      const f = node.callFrame;
      const here = `${f.functionName || '(anon)'} ${short(f.url)}:${f.lineNumber + 1}`;
      const next = [
        ...stack,
        { here, mine: f.url !== '' && !f.url.includes('node_modules') && !f.url.startsWith('node:') },
      ];
      if (node.selfSize > 0) {
        total += node.selfSize;
        self.set(here, (self.get(here) ?? 0) + node.selfSize);
        const mine = [...next].reverse().find((x) => x.mine)?.here ?? '(none)';
        own.set(mine, (own.get(mine) ?? 0) + node.selfSize);
      }
      for (const c of node.children) walk(c, next.length > 60 ? next.slice(-60) : next);
    };
    walk(profile.head, []);
    const top = (m) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 35)
        .map(
          ([k, v]) =>
            `  ${(v / 1048576).toFixed(1).padStart(7)} MB ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`,
        )
        .join('\n');
    process.stderr.write(
      `[alloc ${process.pid}] ${(total / 1048576).toFixed(0)} MB sampled (${minor ? 'all' : 'survived a scavenge'}), ${from / 1000}–${to / 1000} s\n-- by site:\n${top(self)}\n-- by nearest own frame:\n${top(own)}\n`,
    );
  }, to - from);
}, from).unref();
