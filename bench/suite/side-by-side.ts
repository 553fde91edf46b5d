/**
 * memctx and the reference MCP memory server on the same LoCoMo conversations, each through MCP
 * stdio as an agent's client would call it: memctx's `search` (on the engine that the recall
 * benchmark filled) and server-memory's `search_nodes`. Same questions, same metric.
 *
 * server-memory holds what it is given: one entity per speaker, observations = that speaker's
 * turns each prefixed with the session date, the very units of the README's BM25 baseline. Not
 * memctx's extracted memories: that would credit memctx's extraction to the reference server, and
 * an agent using server-memory stores what was said, since the server extracts nothing.
 * search_nodes matches its query as one substring, so a whole question rarely matches anything;
 * the second row gives it the agent's obvious retry: one call per content word of the question
 * (the metric's stemmed tokens, which also match as prefixes), entities ranked by words matched.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sample, sessions } from "../locomo/data.js";
import { tokens } from "../locomo/metric.js";
import { type Budget, memctxMcpTexts, percentiles, round, startMemctxMcp } from "./common.js";
import { BUDGETS, CoverageSums, type LocomoStore, SEARCH_LIMIT, scored } from "./recall.js";
import {
  loadEntities,
  SERVER_MEMORY,
  SERVER_MEMORY_VERSION,
  searchNodesTexts,
  type serverMemoryEntry,
  startServerMemory,
} from "./server-memory.js";

export interface SideBySideRow {
  system: string;
  how: string;
  questions: number;
  callsPerQuestion: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  coverage: Record<string, number | null>;
  charsReturned: number | null;
  coldStartMs: number | null;
}

export interface SideBySideResult {
  skipped?: string;
  reference: string;
  samples: string[];
  observations: number;
  rows: SideBySideRow[];
  stopped: boolean;
}

interface Acc {
  ms: number[];
  sums: CoverageSums;
  chars: number;
  calls: number;
  cold: number[];
}
const acc = (): Acc => ({ ms: [], sums: new CoverageSums(), chars: 0, calls: 0, cold: [] });

function row(system: string, how: string, a: Acc): SideBySideRow {
  const p = percentiles(a.ms);
  const questions = a.ms.length;
  return {
    system,
    how,
    questions,
    callsPerQuestion: questions ? round(a.calls / questions, 1)! : 0,
    p50: round(p.p50),
    p95: round(p.p95),
    p99: round(p.p99),
    coverage: Object.fromEntries(BUDGETS.map((b) => [String(b), a.sums.mean(b)])),
    charsReturned: questions ? Math.round(a.chars / questions) : null,
    coldStartMs: a.cold.length ? round(percentiles(a.cold).p50, 0) : null,
  };
}

/**
 * Asks each question of every system in turn, until the questions or the budget run out: the
 * systems' rows always cover the same questions, however slow one of them is.
 */
export async function askInTurn<Q>(
  questions: readonly Q[],
  budget: Budget,
  systems: readonly ((question: Q, index: number) => Promise<void>)[],
): Promise<number> {
  let asked = 0;
  for (const [i, q] of questions.entries()) {
    if (budget.spent()) break;
    for (const ask of systems) await ask(q, i);
    asked++;
  }
  return asked;
}

/**
 * `fetched`: the reference server, fetched before the budget starts (a first fetch takes longer
 * than a quick run's whole budget).
 */
export async function benchSideBySide(
  samples: Sample[] | null,
  store: LocomoStore | null,
  cli: string[],
  budget: Budget,
  fetched: Awaited<ReturnType<typeof serverMemoryEntry>>,
): Promise<SideBySideResult> {
  const reference = `${SERVER_MEMORY}@${SERVER_MEMORY_VERSION}`;
  const base = { reference, samples: [], observations: 0, rows: [], stopped: false };
  if (!samples || !store) return { ...base, skipped: "LoCoMo data not found" };
  const memctx = acc();
  const whole = acc();
  const words = acc();
  let observations = 0;
  const done: string[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "memctx-bench-sbs-"));
  try {
    for (const sample of samples) {
      if (budget.spent()) break;
      done.push(sample.sample_id);
      const questions = scored(sample);
      // memctx: `memctx mcp` on the engine the recall benchmark filled, bound to the sample's namespace.
      const t0 = performance.now();
      const mcp = await startMemctxMcp(cli, store.dataDir, sample.sample_id, store.env);
      let server: Awaited<ReturnType<typeof startServerMemory>> | undefined;
      try {
        const askMemctx = async (q: (typeof questions)[number], i: number) => {
          const t1 = performance.now();
          const r = await mcp.call("search", { query: q.question, limit: SEARCH_LIMIT });
          const ms = performance.now() - t1;
          if (i === 0) memctx.cold.push(performance.now() - t0);
          const texts = memctxMcpTexts(r);
          memctx.ms.push(ms);
          memctx.calls++;
          memctx.chars += texts.reduce((a, t) => a + t.length, 0);
          memctx.sums.add(q, texts);
        };
        const systems = [askMemctx];
        if (!("skipped" in fetched)) {
          const entities = new Map<string, string[]>();
          for (const s of sessions(sample))
            for (const t of s.turns) {
              const list = entities.get(t.speaker) ?? [];
              list.push(`[${s.dateTime}] ${t.speaker}: ${t.text}`);
              entities.set(t.speaker, list);
              observations++;
            }
          const reference = await startServerMemory(fetched.entry, join(tmp, `${sample.sample_id}.jsonl`));
          server = reference;
          await loadEntities(reference, entities);
          const loadedAt = performance.now();
          systems.push(async (q, i) => {
            const t1 = performance.now();
            const r = await reference.call("search_nodes", { query: q.question });
            whole.ms.push(performance.now() - t1);
            if (i === 0) whole.cold.push(reference.connectMs + (performance.now() - loadedAt));
            const texts = searchNodesTexts(r);
            whole.calls++;
            whole.chars += texts.reduce((a, t) => a + t.length, 0);
            whole.sums.add(q, texts);
          });
          systems.push(async (q) => {
            // One call per content word; entities ranked by how many of the words they matched.
            const hits = new Map<string, { matched: number; texts: string[]; order: number }>();
            const t2 = performance.now();
            for (const w of new Set(tokens(q.question))) {
              const rw = await reference.call("search_nodes", { query: w });
              words.calls++;
              const s = rw.structuredContent as
                | { entities?: { name: string; observations: string[] }[] }
                | undefined;
              for (const e of s?.entities ?? []) {
                const h = hits.get(e.name) ?? { matched: 0, texts: e.observations, order: hits.size };
                h.matched++;
                hits.set(e.name, h);
              }
            }
            words.ms.push(performance.now() - t2);
            const ranked = [...hits.values()]
              .sort((a, b) => b.matched - a.matched || a.order - b.order)
              .flatMap((h) => h.texts);
            words.chars += ranked.reduce((a, t) => a + t.length, 0);
            words.sums.add(q, ranked);
          });
        }
        await askInTurn(questions, budget, systems);
      } finally {
        await mcp.close();
        await server?.close();
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const rows = [row("memctx", `MCP stdio \`search\` (hybrid, limit ${SEARCH_LIMIT}), one call`, memctx)];
  if (!("skipped" in fetched)) {
    rows.push(row(SERVER_MEMORY, "MCP stdio `search_nodes`, the question as the query", whole));
    rows.push(row(SERVER_MEMORY, "MCP stdio `search_nodes`, one call per content word, union", words));
  }
  return {
    ...base,
    ...("skipped" in fetched ? { skipped: fetched.skipped } : {}),
    samples: done,
    observations,
    rows,
    stopped: budget.stopped,
  };
}
