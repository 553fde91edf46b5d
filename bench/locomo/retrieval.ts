import { DatabaseSync } from "node:sqlite";

/**
 * The retrieval recipe the engine's search is to match (see RECIPE.md), run in the bench so it can
 * be tuned before the engine exists: one FTS5 table per kind (chunks, memories) with two columns
 * (the unit's text, and the text around it at a lower weight), BM25, each list normalized into
 * [0, 1] against its best hit, weighted and merged.
 */
export interface Unit {
  kind: "chunk" | "memory";
  /** What a hit returns (and what the budget counts); also indexed. */
  text: string;
  /** Indexed beside the text at `contextWeight`: the turns around a chunk, or a memory's source turns. */
  context: string;
  /** Who said it (lowercase), for the person-match penalty. */
  speaker: string | null;
  /** Source turns: a memory is skipped once the chunk it came from is in the results. */
  turns: string[];
}

export interface Hit {
  unit: Unit;
  similarity: number;
}

export type Mode = "hybrid" | "chunks" | "memories";

export interface RecipeOptions {
  /** Weights of each kind in the fused similarity; the best hit of a kind scores its weight. */
  memoryWeight: number;
  chunkWeight: number;
  /** BM25 column weight of the context column (the text column weighs 1). */
  contextWeight: number;
  /** Score factor for a unit said by someone else when the query names a person. */
  otherPersonFactor: number;
  /** Drop a memory whose source chunk is already in the results. */
  dedup: boolean;
  /** Drop a hit when at least this share of its distinct content words are already in the results (1 = off). */
  novelty: number;
  limit: number;
  threshold: number;
}

export const DEFAULT_RECIPE: RecipeOptions = {
  memoryWeight: 1,
  chunkWeight: 0.35,
  contextWeight: 0.3,
  otherPersonFactor: 0.7,
  dedup: true,
  novelty: 0.8,
  limit: 100,
  threshold: 0.3,
};

// Words that say what is asked, not what about: left out of the FTS5 query.
const QUERY_STOP = new Set(
  (
    "a an the of to in on at for and or is are was were be been do did does i you he she it we they " +
    "my your his her our their me him us them what when where who whom which how why that this with " +
    "from by as about into has have had not no would could should will can may might likely kind type " +
    "s many much some any ever"
  ).split(" "),
);

/** FTS5 MATCH expression: the query's content words, each quoted, OR-ed. */
export function matchQuery(query: string): string | null {
  const words = (query.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !QUERY_STOP.has(w));
  const unique = [...new Set(words)];
  return unique.length === 0 ? null : unique.map((w) => `"${w}"`).join(" OR ");
}

export class UnitIndex {
  private readonly db = new DatabaseSync(":memory:");
  private readonly units: Unit[] = [];
  private readonly speakers = new Set<string>();

  constructor(units: Unit[], tokenizer = "porter unicode61") {
    for (const kind of ["chunk", "memory"]) {
      this.db.exec(`CREATE VIRTUAL TABLE ${kind}_fts USING fts5(text, context, tokenize='${tokenizer}')`);
    }
    const insert = {
      chunk: this.db.prepare("INSERT INTO chunk_fts(rowid, text, context) VALUES (?, ?, ?)"),
      memory: this.db.prepare("INSERT INTO memory_fts(rowid, text, context) VALUES (?, ?, ?)"),
    };
    this.db.exec("BEGIN");
    for (const u of units) {
      this.units.push(u);
      if (u.speaker) this.speakers.add(u.speaker);
      insert[u.kind].run(this.units.length, u.text, u.context);
    }
    this.db.exec("COMMIT");
  }

  private async list(
    kind: "chunk" | "memory",
    match: string,
    opts: RecipeOptions,
  ): Promise<{ unit: Unit; score: number }[]> {
    const weights = `1.0, ${opts.contextWeight.toFixed(3)}`;
    const query = opts.contextWeight > 0 ? match : `{text} : (${match})`;
    const rows = (await this.db
      .prepare(
        `SELECT rowid AS id, -bm25(${kind}_fts, ${weights}) AS score FROM ${kind}_fts ` +
          `WHERE ${kind}_fts MATCH ? ORDER BY bm25(${kind}_fts, ${weights}) LIMIT ?`,
      )
      .all(query, opts.limit)) as { id: number; score: number }[];
    return rows.map((r) => ({ unit: this.units[r.id - 1]!, score: r.score }));
  }

  async search(query: string, mode: Mode, opts: RecipeOptions = DEFAULT_RECIPE): Promise<Hit[]> {
    // People the query names ("Mel" names Melanie): searched by full name; units said by others weigh less.
    const words = query.toLowerCase().match(/[a-z]+/g) ?? [];
    const named = new Set(
      [...this.speakers].filter((sp) => words.some((w) => w.length >= 3 && sp.startsWith(w))),
    );
    const match = matchQuery([query, ...named].join(" "));
    if (match === null) return [];
    const lists: ["chunk" | "memory", number][] = [];
    if (mode !== "memories") lists.push(["chunk", opts.chunkWeight]);
    if (mode !== "chunks") lists.push(["memory", opts.memoryWeight]);
    const hits: Hit[] = [];
    for (const [kind, weight] of lists) {
      const rows = await this.list(kind, match, opts);
      if (named.size > 0) {
        for (const r of await rows)
          if (r.unit.speaker !== null && !named.has(r.unit.speaker)) r.score *= opts.otherPersonFactor;
      }
      const top = Math.max(0, ...rows.map((r) => r.score));
      // sqrt keeps the order of weight * score / top and spreads it over [0, 1], so that the API's
      // default threshold (0.3) only drops hits under ~9% of the best memory (~26% of the best chunk).
      for (const r of await rows)
        hits.push({ unit: r.unit, similarity: top > 0 ? Math.sqrt((weight * r.score) / top) : 0 });
    }
    hits.sort((a, b) => b.similarity - a.similarity);
    const out: Hit[] = [];
    const inResults = new Set<string>();
    const seenWords = new Set<string>();
    for (const h of hits) {
      if (h.similarity < opts.threshold) continue;
      if (opts.dedup && h.unit.kind === "memory" && h.unit.turns.every((t) => inResults.has(t))) continue;
      // A hit whose words are mostly in the results already adds little but length.
      if (opts.novelty < 1) {
        const toks = [
          ...new Set((h.unit.text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !QUERY_STOP.has(w))),
        ];
        const seenCount = toks.filter((w) => seenWords.has(w)).length;
        if (toks.length > 0 && seenCount / toks.length >= opts.novelty) continue;
        for (const w of toks) seenWords.add(w);
      }
      if (h.unit.kind === "chunk") for (const t of h.unit.turns) inResults.add(t);
      out.push(h);
      if (out.length >= opts.limit) break;
    }
    return out;
  }

  close(): void {
    this.db.close();
  }
}
