import type { Sample } from "./data.js";
import { sessions } from "./data.js";
import { coverage, tokens } from "./metric.js";

/** reference_score.py's bm25_baseline, ported: BM25 over turns each prefixed with its session date. */
export function bm25Baseline(data: Sample[], budget: number): { figure: number; n: number } {
  let total = 0;
  let n = 0;
  for (const c of data) {
    const units = sessions(c).flatMap((s) => s.turns.map((t) => `[${s.dateTime}] ${t.speaker}: ${t.text}`));
    const docs = units.map((u) => tokens(u));
    const N = docs.length;
    const avg = docs.reduce((a, d) => a + d.length, 0) / N;
    const df = new Map<string, number>();
    for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
    const tfs = docs.map((d) => {
      const m = new Map<string, number>();
      for (const w of d) m.set(w, (m.get(w) ?? 0) + 1);
      return m;
    });
    for (const q of c.qa) {
      if (q.category === 5) continue;
      const qt = tokens(q.question);
      const score = (i: number) => {
        let s = 0;
        for (const w of qt) {
          const f = tfs[i]!.get(w);
          if (f) {
            const d = df.get(w)!;
            const idf = Math.log(1 + (N - d + 0.5) / (d + 0.5));
            s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * docs[i]!.length) / avg));
          }
        }
        return s;
      };
      const scores = units.map((_, i) => score(i));
      // Python's sorted() is stable: ties keep document order.
      const order = units.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
      const cov = coverage(
        q.answer,
        order.map((i) => units[i]!),
        budget,
      );
      if (cov !== null) {
        total += cov;
        n++;
      }
    }
  }
  return { figure: total / n, n };
}
