/** Edit distance (insert, delete, substitute), case-insensitive; enough for short class names. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[y.length];
}

/**
 * Up to `max` candidates close to a misspelled name: within a third of its length in edits, or
 * sharing a case-insensitive prefix/suffix relationship ("Orders" -> "Order", "_User" -> "User").
 */
export function closestNames(name: string, candidates: readonly string[], max = 3): string[] {
  const wanted = name.toLowerCase().replace(/^_/, '');
  const budget = Math.max(2, Math.floor(wanted.length / 3));
  return candidates
    .map((candidate) => {
      const plain = candidate.toLowerCase().replace(/^_/, '');
      const contains = wanted.length >= 3 && (plain.includes(wanted) || wanted.includes(plain));
      return { candidate, score: contains ? 0 : distance(wanted, plain) };
    })
    .filter((c) => c.score <= budget)
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map((c) => c.candidate);
}
