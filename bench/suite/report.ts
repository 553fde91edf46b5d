/** The Markdown report (tables + SVG charts beside it) from one run's results. */
import { fitExponent, round } from "./common.js";
import type { IngestResult } from "./ingest.js";
import { BUDGETS, CATEGORIES, type RecallResult } from "./recall.js";
import type { ReplicasResult } from "./replicas.js";
import type { SideBySideResult } from "./side-by-side.js";
import { PATHS, type PathFigures, type SpeedResult } from "./speed.js";
import { groupedBars, logLogLines } from "./svg.js";

export interface SuiteResults {
  date: string;
  quick: boolean;
  /** Where the engines kept their data (absent in results from before `--backend`: SQLite). */
  backend?: "sqlite" | "postgres";
  machine: { node: string; cpus: number; loadAverage: number; platform: string };
  children: string;
  budgetsSeconds: Record<string, number>;
  secondsTaken: Record<string, number>;
  recall?: RecallResult;
  sideBySide?: SideBySideResult;
  ingest?: IngestResult;
  replicas?: ReplicasResult;
  speed?: SpeedResult;
  growth?: GrowthRow[];
  errors: Record<string, string>;
}

export interface GrowthRow {
  path: string;
  cost: string;
  points: { n: number; y: number | null }[];
  k: number | null;
  /** The slope between the two largest sizes alone: fixed costs flatten the small end. */
  kTop: number | null;
  verdict: string;
}

const METRICS: [string, (f: PathFigures) => number | null][] = [
  ["search p50 (ms)", (f) => f.search?.p50 ?? null],
  ["search p95 (ms)", (f) => f.search?.p95 ?? null],
  ["profile p50 (ms)", (f) => f.profile?.p50 ?? null],
  ["RSS (MiB)", (f) => f.rssMiB],
  ["cold start (ms)", (f) => f.coldStartMs],
];

export function verdict(k: number | null): string {
  if (k === null) return "n/a";
  if (k < 0.15) return "flat";
  if (k < 0.85) return "sublinear (better than linear)";
  if (k <= 1.15) return "linear";
  return "superlinear (worse than linear)";
}

export function growth(speed: SpeedResult | undefined): GrowthRow[] {
  if (!speed || speed.sizes.length < 2) return [];
  const rows: GrowthRow[] = [];
  for (const path of PATHS) {
    for (const [cost, get] of METRICS) {
      // The in-process RSS is the bench process's (LoCoMo, the corpus generator...): not the engine's.
      if (path === "in-process" && cost === "RSS (MiB)") continue;
      const points = speed.sizes.map((s) => {
        const f = s.paths[path];
        return { n: s.memories, y: f ? get(f) : null };
      });
      if (points.filter((p) => p.y !== null).length < 2) continue;
      const k = round(fitExponent(points), 2);
      const kTop = round(fitExponent(points.filter((p) => p.y !== null).slice(-2)), 2);
      rows.push({ path, cost, points, k, kTop, verdict: verdict(Math.max(k ?? 0, kTop ?? 0)) });
    }
  }
  return rows;
}

const PATH_COLORS = ["#2563eb", "#16a34a", "#ea580c", "#9333ea"];
const f = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "–" : v.toFixed(d));
const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
const sizeLabel = (n: number) => (n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n));

/** Markdown, and the SVG files it links to (name -> content), named from `stem`. */
export function renderReport(
  r: SuiteResults,
  stem: string,
): { markdown: string; svgs: Record<string, string> } {
  const svgs: Record<string, string> = {};
  const md: string[] = [];
  const postgres = r.backend === "postgres";
  const flags = [r.quick ? "--quick" : "", postgres ? "--backend postgres" : ""].filter(Boolean).join(" ");
  md.push(`# memctx benchmarks, ${r.date}${r.quick ? " (quick)" : ""}${postgres ? ", PostgreSQL" : ""}`);
  md.push(
    `Node ${r.machine.node}, ${r.machine.cpus} CPUs (load ${r.machine.loadAverage.toFixed(1)} at start), ${r.machine.platform}; ` +
      `store: ${postgres ? "PostgreSQL (a schema per benchmark in the given database)" : "SQLite (a data directory per benchmark)"}; ` +
      `offline defaults (built-in word vectors, offline extractor). Child processes run ${r.children}. Produced by \`npm run bench${flags ? ` -- ${flags}` : ""}\`; ` +
      `raw figures in \`${stem}.json\`.`,
  );
  for (const [name, msg] of Object.entries(r.errors)) md.push(`> **${name} failed:** ${msg}`);

  // ---------- recall ----------
  md.push("## Recall: LoCoMo answer coverage");
  const rc = r.recall;
  if (!rc || rc.skipped) md.push(`Skipped: ${rc?.skipped ?? "not run"}.`);
  else {
    md.push(
      `Conversations ${rc.samples.join(", ")} (${rc.sessions} sessions, ${rc.turns} turns) ingested through the full pipeline ` +
        `(one conversation document per session, its date as the document date, instant dreaming) in ${f(rc.ingestSeconds, 1)} s: ` +
        `${rc.memories} memories, ${rc.chunks} chunks. Each question of categories 1-4 searched with limit 100 (threshold 0.3); ` +
        `coverage = share of the gold answer's content tokens within the first N characters of the hits ` +
        `(bench/locomo/metric.ts, a port of reference_score.py). Baseline: the README's plain BM25 over dated turns, computed in this run on the same conversations.` +
        (rc.stopped ? " **Stopped at its time budget: not every question was asked.**" : ""),
    );
    const head = [
      "system",
      "budget (chars)",
      "all",
      ...Object.values(CATEGORIES),
      "questions",
      "hits/question",
      "chars/question",
    ];
    const rows: (string | number)[][] = rc.rows.map((x) => [
      x.system === "memctx hybrid" ? `**${x.system}**` : x.system,
      x.budget,
      x.system === "memctx hybrid" && x.budget === 3000 ? `**${f(x.all, 3)}**` : f(x.all, 3),
      ...Object.values(CATEGORIES).map((c) => f(x.byCategory[c], 3)),
      x.questions,
      f(x.hitsPerQuestion, 1),
      f(x.charsPerQuestion, 0),
    ]);
    for (const b of rc.baseline)
      rows.push([
        "BM25 dated turns (baseline)",
        b.budget,
        f(b.coverage, 3),
        "",
        "",
        "",
        "",
        b.questions,
        "all turns",
        "",
      ]);
    md.push(table(head, rows));
    const systems = ["memctx hybrid", "memctx memories", "memctx chunks"];
    svgs.recall = groupedBars({
      title: "LoCoMo answer coverage by context budget",
      groups: BUDGETS.map((b) => `${b} chars`),
      series: [
        ...systems.map((s) => ({
          name: s,
          values: BUDGETS.map((b) => rc.rows.find((x) => x.system === s && x.budget === b)?.all ?? null),
        })),
        {
          name: "BM25 baseline",
          values: BUDGETS.map((b) => rc.baseline.find((x) => x.budget === b)?.coverage ?? null),
        },
      ],
      yMax: 1,
      yLabel: "answer coverage",
    });
    md.push(`![LoCoMo coverage](${stem}-recall.svg)`);
  }

  // ---------- side by side ----------
  md.push("## Side by side with the reference MCP memory server");
  const sb = r.sideBySide;
  if (!sb) md.push("Not run.");
  else {
    if (sb.skipped) md.push(`**${sb.reference} skipped:** ${sb.skipped}.`);
    md.push(
      `Same machine, same run, same questions (${sb.samples.join(", ") || "none"}), both through MCP over stdio with the SDK's client. ` +
        `${sb.reference} was loaded with ${sb.observations} observations: one entity per speaker, observations = that speaker's turns, ` +
        `each prefixed with its session date (the README baseline's units). Why not memctx's extracted memories: that would credit memctx's ` +
        `extraction to the reference server, which extracts nothing itself. Its \`search_nodes\` matches the query as one substring and ` +
        `returns whole entities (every observation), so the question verbatim rarely matches; the third row is the agent's obvious retry, ` +
        `one call per content word of the question. Latency is per question (all of its calls). Cold start: spawn to the first tool result.` +
        (sb.stopped ? " **Stopped at its time budget.**" : ""),
    );
    md.push(
      table(
        [
          "system",
          "how",
          "questions",
          "calls/question",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          ...BUDGETS.map((b) => `coverage@${b}`),
          "chars returned",
          "cold start ms",
        ],
        sb.rows.map((x) => [
          x.system,
          x.how,
          x.questions,
          x.callsPerQuestion,
          f(x.p50),
          f(x.p95),
          f(x.p99),
          ...BUDGETS.map((b) => f(x.coverage[String(b)], 3)),
          x.charsReturned ?? "–",
          x.coldStartMs ?? "–",
        ]),
      ),
    );
    if (sb.rows.length > 1) {
      svgs["side-by-side"] = groupedBars({
        title: "Answer coverage through MCP stdio, same questions",
        groups: BUDGETS.map((b) => `${b} chars`),
        series: sb.rows.map((x, i) => ({
          name: i === 0 ? "memctx search" : i === 1 ? "server-memory (question)" : "server-memory (per word)",
          values: BUDGETS.map((b) => x.coverage[String(b)] ?? null),
        })),
        yMax: 1,
        yLabel: "answer coverage",
      });
      md.push(`![side by side](${stem}-side-by-side.svg)`);
    }
  }

  // ---------- ingest ----------
  md.push("## Ingest");
  const ig = r.ingest;
  if (!ig) md.push("Not run.");
  else {
    md.push(
      `${ig.documents} synthetic conversation documents (~${ig.charsPerDocument} characters, 10 turns each) added through the ` +
        `API in process (MemoryClient over engine.fetch, ${ig.concurrency} concurrent adds), default engine: 2 workers, offline extractor, ` +
        `dynamic dreaming (batches start 2 s after the last document, at most 10 s after the first).` +
        (ig.stopped ? " **Stopped at its time budget.**" : ""),
    );
    md.push(
      table(
        [
          "documents",
          "accepted/s",
          "to `done`: docs/s",
          "to memories ready: docs/s",
          "s to done",
          "s to memories",
          "memories",
          "chunks",
          "request loop delay p50 / p99 / max ms",
        ],
        [
          [
            ig.documents,
            f(ig.acceptedPerSecond, 1),
            f(ig.donePerSecond, 1),
            f(ig.memoriesPerSecond, 1),
            f(ig.secondsToDone),
            f(ig.secondsToMemories),
            ig.memories,
            ig.chunks,
            ig.loopDelayMs ? `${ig.loopDelayMs.p50} / ${ig.loopDelayMs.p99} / ${ig.loopDelayMs.max}` : "–",
          ],
        ],
      ),
    );
    if (rc && !rc.skipped && rc.ingestSeconds)
      md.push(
        `LoCoMo (recall above, instant dreaming, one document at a time): ${rc.sessions} sessions in ${f(rc.ingestSeconds, 1)} s = ` +
          `${f(rc.sessions / rc.ingestSeconds, 1)} documents/s to memories ready (${f(rc.turns / rc.ingestSeconds, 0)} turns/s).`,
      );
  }

  // ---------- replicas ----------
  const rp = r.replicas;
  if (rp) {
    md.push("## Ingest through `memctx serve` replicas");
    md.push(
      `Synthetic conversation documents added over HTTP (${rp.concurrency} at a time, round-robin over the replicas) to ` +
        `\`memctx serve\` processes with their default processing (2 loops) on one ${rp.backend === "postgres" ? "PostgreSQL schema" : "SQLite data directory (one replica only)"}; ` +
        `docs/s from the first add until every document is \`done\`, with the documents in one namespace and spread over several (tenants). ` +
        `A namespace's memories are dreamed by one worker at a time, whichever replica it runs on. Replicas share this machine's ${r.machine.cpus} CPUs.` +
        (rp.stopped ? " **Stopped at its time budget.**" : ""),
    );
    md.push(
      table(
        ["replicas", "namespaces", "documents", "s to done", "to `done`: docs/s", "vs one replica"],
        rp.rows.map((x) => [
          x.replicas,
          x.namespaces ?? 1,
          x.documents,
          f(x.secondsToDone),
          f(x.donePerSecond, 1),
          x.speedup === null ? "–" : `${f(x.speedup)}x`,
        ]),
      ),
    );
  }

  // ---------- speed ----------
  md.push("## Speed: search, profile, memory, cold start");
  const sp = r.speed;
  if (!sp) md.push("Not run.");
  else {
    md.push(
      `Sizes in memories; the corpus (one memory per turn of 10-turn synthetic conversations, words Zipf-drawn from LoCoMo's vocabulary) ` +
        `is **seeded straight into the store** through the engine's own write functions (addDocument, the pipeline's indexDocument ` +
        `with real chunking, the store's insertMemory), not through extraction: recall above measures the full pipeline. ` +
        `${sp.queries} LoCoMo questions per figure (fewer when the budget ran out: see n), ${sp.searchMode} search, limit ${sp.limit}. ` +
        `In process: MemoryClient over engine.fetch (its RSS, in parentheses, is the whole bench process's, left out of the fits and plots). HTTP: \`memctx serve\` as its own process. ` +
        `MCP stdio: \`memctx mcp\` started as an MCP client starts it. server-memory: the same number of observations, its ` +
        `\`search_nodes\` with the same questions${sp.serverMemory === "ok" ? "" : ` (**skipped:** ${sp.serverMemory})`}. ` +
        `RSS = VmRSS of the process holding the store, after its queries. Cold start = spawn to the first tool result (median).` +
        (sp.stopped ? " **Stopped at its time budget: larger sizes or some paths are missing.**" : ""),
    );
    const rows: (string | number)[][] = [];
    for (const s of sp.sizes) {
      for (const p of PATHS) {
        const x = s.paths[p];
        if (!x) continue;
        rows.push([
          `${sizeLabel(s.memories)}${p === "in-process" ? ` (${sizeLabel(s.chunks)} chunks)` : ""}`,
          p,
          f(x.search?.p50),
          f(x.search?.p95),
          f(x.search?.p99),
          x.search?.n ?? "–",
          f(x.profile?.p50),
          f(x.profile?.p95),
          p === "in-process" ? `(${f(x.rssMiB, 0)})` : f(x.rssMiB, 0),
          x.coldStartMs ?? "–",
        ]);
      }
    }
    md.push(
      table(
        [
          "memories",
          "path",
          "search p50 ms",
          "p95",
          "p99",
          "n",
          "profile p50 ms",
          "profile p95",
          "RSS MiB",
          "cold start ms",
        ],
        rows,
      ),
    );
    md.push(
      `Seeding took ${sp.sizes.map((s) => `${f(s.seedSeconds, 1)} s to ${sizeLabel(s.memories)}`).join(", ")}.`,
    );
    const series = (get: (x: PathFigures) => number | null) =>
      PATHS.map((p, i) => ({
        name: p,
        color: PATH_COLORS[i],
        points: sp.sizes.map((s) => ({ x: s.memories, y: s.paths[p] ? get(s.paths[p]!) : null })),
      })).filter((s) => s.points.some((q) => q.y !== null));
    svgs["search-latency"] = logLogLines({
      title: "Search latency p50 (log-log)",
      series: series((x) => x.search?.p50 ?? null),
      xLabel: "memories",
      yLabel: "ms",
    });
    svgs.rss = logLogLines({
      title: "Resident memory (log-log)",
      series: series((x) => x.rssMiB).filter((s) => s.name !== "in-process"),
      xLabel: "memories",
      yLabel: "MiB",
    });
    md.push(`![search latency](${stem}-search-latency.svg) ![resident memory](${stem}-rss.svg)`);
  }

  // ---------- growth ----------
  md.push("## Growth from the smallest to the largest size");
  const g = r.growth ?? [];
  if (g.length === 0) md.push("Fewer than two sizes measured: no fit.");
  else {
    md.push(
      "k is the least-squares slope of log(cost) on log(size): cost ~ n^k. k ≤ 1 is linear or better; near 0 is flat. " +
        "Fixed costs (process, protocol, a few milliseconds) flatten the small sizes, so the slope between the two largest " +
        "sizes is shown too; the verdict takes the larger of the two.",
    );
    md.push(
      table(
        [
          "path",
          "cost",
          ...(sp?.sizes ?? []).map((s) => sizeLabel(s.memories)),
          "k (all sizes)",
          "k (two largest)",
          "growth",
        ],
        g.map((x) => [x.path, x.cost, ...x.points.map((p) => f(p.y)), f(x.k), f(x.kTop), x.verdict]),
      ),
    );
    const worst = g
      .filter((x) => x.k !== null && x.path !== "server-memory (MCP stdio)")
      .sort((a, b) => b.k! - a.k!)[0];
    if (worst)
      md.push(
        `memctx's steepest cost: ${worst.path} ${worst.cost}, k = ${f(worst.k)} (${worst.verdict}). ` +
          (g.every((x) => x.path === "server-memory (MCP stdio)" || x.k === null || x.k <= 1.15)
            ? "Every memctx cost grows linearly or better."
            : "Some memctx cost grows faster than linearly."),
      );
  }
  md.push(
    `## Time per benchmark\n${table(
      ["benchmark", "budget s", "taken s"],
      Object.keys(r.budgetsSeconds).map((k) => [k, r.budgetsSeconds[k]!, f(r.secondsTaken[k] ?? null, 1)]),
    )}`,
  );
  return { markdown: `${md.join("\n\n")}\n`, svgs };
}
