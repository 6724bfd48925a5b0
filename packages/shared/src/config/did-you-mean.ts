/** Edit distance (insert, delete, substitute), case-sensitive. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitute = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The closest candidate when it is close enough to be a likely typo, else undefined. */
export function didYouMean(name: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(name.length / 4));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    // A name cut short or carrying an extra suffix (VEFAAS_SECRET, RF_QUEUE_NAME) counts as close.
    const truncated = candidate.startsWith(`${name}_`) || name.startsWith(`${candidate}_`);
    const distance = truncated ? 1 : editDistance(name, candidate);
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/**
 * Up to `max` candidates close enough to `name` to be a likely typo, closest first (ties in the given
 * order): for "did you mean" lists where more than one near miss may be meant (run ids of one experiment).
 */
export function closestNames(name: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.max(2, Math.floor(name.length / 4));
  return candidates
    .map((candidate, index) => ({ candidate, index, distance: editDistance(name, candidate) }))
    .filter((c) => c.distance <= limit && c.candidate !== name)
    .sort((a, b) => a.distance - b.distance || a.index - b.index)
    .slice(0, max)
    .map((c) => c.candidate);
}
