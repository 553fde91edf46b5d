/**
 * Answer coverage at a context budget: a port of ../shared/data/locomo/reference_score.py, kept
 * token for token so figures compare with the README's baseline.
 */
const STOP = new Set(
  (
    "a an the of to in on at for and or is are was were be been do did does i you he she it we they " +
    "my your his her our their me him us them what when where who whom which how why that this with " +
    "from by as about into has have had not no"
  ).split(" "),
);

export function stem(w: string): string {
  for (const suf of ["ing", "ed", "es", "s"]) {
    if (w.length > 4 && w.endsWith(suf)) return w.slice(0, -suf.length);
  }
  return w;
}

export function tokens(text: unknown): string[] {
  const words =
    String(text)
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? [];
  return words.filter((w) => !STOP.has(w)).map(stem);
}

/** Fraction of the answer's tokens found in the texts taken in rank order within `budget` characters. */
export function coverage(answer: unknown, rankedTexts: string[], budget: number): number | null {
  const ans = new Set(tokens(answer));
  if (ans.size === 0) return null;
  let used = 0;
  const ctx = new Set<string>();
  for (const t of rankedTexts) {
    used += t.length;
    if (used > budget) break;
    for (const w of tokens(t)) ctx.add(w);
  }
  let hit = 0;
  for (const w of ans) if (ctx.has(w)) hit++;
  return hit / ans.size;
}
