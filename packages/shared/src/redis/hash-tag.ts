/**
 * Redis Cluster hash tags. A cluster hashes only the part of a key between the first `{` and the next
 * `}` (when that part is not empty), so keys sharing a tag live in one slot — which every multi-key
 * command and Lua script needs. BullMQ's keys are `<prefix>:<queue>:…` and ours `rf:<prefix>:…`, so a
 * prefix carrying a tag (the default `{rf}`) puts the queue and all our keys in one slot.
 */

/** The hash tag Redis Cluster would use for keys starting with `prefix`, or undefined when it has none. */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf('{');
  if (open === -1) return undefined;
  const close = prefix.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return undefined;
  return prefix.slice(open + 1, close);
}

/** Message for a prefix that would scatter a queue over slots (CROSSSLOT errors on a cluster). */
export function missingHashTagProblem(prefix: string): string {
  const suggestion = prefix.replace(/[{}]/g, '') || 'rf';
  return `has no hash tag, but REDIS_URL is a Redis Cluster: BullMQ's scripts and ours touch several keys at once and a cluster refuses keys in different slots (CROSSSLOT); wrap the prefix in braces, e.g. RF_PREFIX={${suggestion}}`;
}
