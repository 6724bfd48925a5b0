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
