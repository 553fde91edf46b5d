import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The source tree's shape, read from the files themselves: store/ imports nothing above it, no
 * import loop anywhere in src/, and SQL lives in src/engine/store/ only (issue 11, "Structure").
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

const files = tsFiles(SRC);
const rel = (p: string) => relative(ROOT, p).split("\\").join("/");

interface Import {
  line: number;
  /** The imported file, absolute (relative specifiers only: packages are not part of the graph). */
  target: string;
}

// `from "./x.js"` (static imports and re-exports, type-only ones too), `import "./x.js"` and
// `import("./x.js")`.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const out: Import[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"));
    out.push({ line: text.slice(0, m.index).split("\n").length, target });
  }
  return out;
}

const graph = new Map(files.map((f) => [f, importsOf(f)]));

// An import or re-export that brings values, not only types: `import { a, type B } from "./x.js"`,
// `export { a } from "./x.js"` (not `import type ...` / `export type ...`).
const VALUE_IMPORT = /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/gm;

function valueImportsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(VALUE_IMPORT)].map((m) => ({
    line: text.slice(0, m.index).split("\n").length,
    target: resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")),
  }));
}

/** Strongly connected components of more than one file (or a file importing itself): Tarjan. */
function importCycles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (edges.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) cycles.push(component);
    }
  };
  for (const f of edges.keys()) if (!index.has(f)) visit(f);
  return cycles;
}

const STORE = join(SRC, "engine", "store");
const inside = (file: string, dir: string) => file.startsWith(`${dir}/`);

/** What store/ must not import: everything that calls it (store may import src/api/ and src/engine/text/). */
const ABOVE_STORE = ["search", "memory", "services", "pipeline", "connectors", "routes", "ingest", "models"]
  .map((d) => join(SRC, "engine", d))
  .concat([join(SRC, "mcp"), join(SRC, "cli"), join(SRC, "client")]);
const ABOVE_STORE_FILES = ["app.ts", "auth.ts", "context.ts", "index.ts", "server.ts", "processing.ts"].map(
  (f) => join(SRC, "engine", f),
);

/** Files outside store/ allowed to hold SQL, each with its reason. */
const SQL_ALLOWED: Record<string, string> = {
  // An in-memory FTS5 table used only as the tokenizer (the index's own stemmer), never the database.
  "src/engine/text/terms.ts": "in-memory FTS5 tokenizer",
};

// SQL in code: a statement prepared or run from a string, or a SQL statement's words in a literal.
const SQL_PATTERNS: [RegExp, string][] = [
  [/\.prepare\(/, ".prepare("],
  [/\.exec\(\s*[`"']/, ".exec(<SQL text>"],
  [/["'`][^"'`]*\bSELECT\s/, "SELECT"],
  [/["'`][^"'`]*\bINSERT\s+(OR\s+\w+\s+)?INTO\b/, "INSERT INTO"],
  [/["'`][^"'`]*\bUPDATE\s+\w+\s+SET\b/, "UPDATE … SET"],
  [/["'`][^"'`]*\bDELETE\s+FROM\b/, "DELETE FROM"],
  [/["'`][^"'`]*\bCREATE\s+(VIRTUAL\s+)?TABLE\b/, "CREATE TABLE"],
];

function sqlOutsideStore(): string[] {
  return codeLinesMatching(
    SQL_PATTERNS,
    (f) => rel(f).startsWith("src/engine/") && !inside(f, STORE) && !(rel(f) in SQL_ALLOWED),
  );
}

/** Store files whose SQL only one database runs, each with its reason. */
const ONE_DATABASE_ONLY: Record<string, string> = {
  "src/engine/store/sqlite.ts": "SQLite's connection and its Dialect",
  "src/engine/store/schema.ts": "SQLite's migrations",
  "src/engine/store/db.ts": "opens SQLite (pragmas) as well as PostgreSQL",
  "src/engine/store/filter.ts": "compiles a filter into either database's SQL (its form)",
};

// SQLite's own spellings, which PostgreSQL refuses: in shared statements they come from the
// connection's Dialect instead.
const ONE_DATABASE_SQL: [RegExp, string][] = [
  [/(=|\bIS|\bIN|[(,])\s*\?\d*\s*([,)"'`]|$|\s(AND|OR|ORDER|LIMIT|WHERE)\b)/, "an anonymous ? parameter"],
  [/\bjson_each\(|\bjson_extract\(|\bjson_type\(/, "SQLite's JSON functions"],
  [/\bINSERT\s+OR\s+(IGNORE|REPLACE)\b/, "INSERT OR …"],
  [/\b(julianday|ifnull|instr|char)\(/, "a SQLite function"],
];

/** Files outside store/ allowed to name a database backend in code, each with its reason. */
const BACKEND_ALLOWED: Record<string, string> = {
  // SQLite's porter tokenizer (an in-memory FTS5 table) is the index's stemmer, never the database.
  "src/engine/text/terms.ts": "node:sqlite as the tokenizer",
};

// Code that knows which database it runs on: the backends' classes, the dialect, their modules.
const BACKEND_PATTERNS: [RegExp, string][] = [
  [/\.dialect\b/, "the connection's SQL dialect"],
  [/\b(PostgresDatabase|SqliteDatabase|DatabaseSync)\b/, "a backend's class"],
  [/["']node:sqlite["']|["']pg["']|store\/postgres\//, "a backend's module"],
  [/===?\s*["'](postgres|sqlite)["']|["'](postgres|sqlite)["']\s*===?/, "a branch on the backend's name"],
];

/** Code lines (not comments) of the files `which` takes that match one of `patterns`. */
function codeLinesMatching(patterns: [RegExp, string][], which: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of files) {
    const name = rel(file);
    if (!which(file)) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        for (const [pattern, what] of patterns) {
          if (pattern.test(line)) found.push(`${name}:${i + 1}: ${what}: ${line.trim()}`);
        }
      });
  }
  return found;
}

/**
 * Opening a transaction or taking a lock: the store's own helpers, the connection's transact, and
 * SQL that would (BEGIN, advisory locks). Writes have one owner: the store's operations take the
 * locks they need; nothing above store/ decides who holds what.
 */
const TRANSACTION_PATTERNS: [RegExp, string][] = [
  [
    /\b(transaction|namespaceTransaction|documentTransaction|lockName|lockNamespace|lockSearchSpace|withWriteLock)\s*\(/,
    "a store transaction or lock helper",
  ],
  [/\.transact\s*\(/, "the connection's transact"],
  // A PEM armor's "-----BEGIN" (text/secrets.ts) is no SQL.
  [/\bpg_(try_)?advisory|(?<!-)\bBEGIN\b|\bFOR UPDATE\b/, "SQL that opens a transaction or takes a lock"],
];
/** The names of store/'s transaction and lock helpers, which no file above it may import. */
const TRANSACTION_HELPERS = new Set([
  "transaction",
  "namespaceTransaction",
  "documentTransaction",
  "lockName",
  "lockNamespace",
  "lockSearchSpace",
  "withWriteLock",
  "inTransaction",
  "transactionOf",
]);

/** The names a file imports (values and types) from store/ modules, with the line of each import. */
function storeImportsOf(file: string): { name: string; line: number; from: string }[] {
  const text = readFileSync(file, "utf8");
  const out: { name: string; line: number; from: string }[] = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = resolve(dirname(file), m[2]!.replace(/\.js$/, ".ts"));
    if (!inside(target, STORE)) continue;
    const line = text.slice(0, m.index).split("\n").length;
    for (const spec of m[1]!.split(",")) {
      const name = spec
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0]!
        .trim();
      if (name) out.push({ name, line, from: rel(target) });
    }
  }
  return out;
}

/** Where transactions are opened or locks taken outside store/ (code lines and imports). */
function transactionsOutsideStore(): string[] {
  // The tokenizer's in-memory table is no database of memctx's (SQL_ALLOWED).
  const outside = (f: string) => rel(f).startsWith("src/") && !inside(f, STORE) && !(rel(f) in SQL_ALLOWED);
  const found = codeLinesMatching(TRANSACTION_PATTERNS, outside);
  for (const file of files.filter(outside)) {
    for (const i of storeImportsOf(file))
      if (TRANSACTION_HELPERS.has(i.name))
        found.push(`${rel(file)}:${i.line}: imports ${i.name} from ${i.from}`);
  }
  return found;
}

/** An exported function's body, from its declaration to the first line that closes it. */
function exportedFunctions(file: string): { name: string; line: number; body: string }[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: { name: string; line: number; body: string }[] = [];
  lines.forEach((l, i) => {
    const m = /^export (?:async )?function (\w+)/.exec(l);
    if (!m) return;
    let end = i;
    while (end < lines.length && lines[end] !== "}") end++;
    out.push({ name: m[1]!, line: i + 1, body: lines.slice(i, end + 1).join("\n") });
  });
  return out;
}

/** A function body that asks which database it runs on. */
const ASKS_BACKEND =
  /\.dialect\.(remote|name)\b|\binstanceof\s+(PostgresDatabase|SqliteDatabase)\b|\bd\.remote\b/;

/**
 * store/ functions that ask which database they run on and may still be called from above: each
 * does one thing, natively on each database, and answers nothing a caller could choose an
 * algorithm by (a predicate such as postingsAreRemote would), with its reason.
 */
const BACKEND_AWARE_ALLOWED: Record<string, string> = {
  openDatabase: "opens either database",
  checkpoint: "copies SQLite's WAL; nothing to do on PostgreSQL, and nothing to branch on",
  databaseState: "what /health and `memctx serve` report",
  databaseBackend: "what /health reports when the database cannot be read",
  topVisibleUnits: "ranks units: sums postings here or in the database, the same scores either way",
  postingsOfUnits: "reads candidates' postings whole or by look-ups, the same postings either way",
  searchStatistics: "reads a namespace's statistics, each database by a plan of its own",
};

/**
 * Backend switches above the store: exported store functions whose body asks which database it
 * runs on and that files above store/ import (a caller could choose an algorithm by it, as search
 * did with postingsAreRemote), other than those allowed.
 */
function backendSwitches(): string[] {
  const aware = new Map<string, string>();
  for (const file of files.filter((f) => inside(f, STORE)))
    for (const fn of exportedFunctions(file))
      if (ASKS_BACKEND.test(fn.body) && !(fn.name in BACKEND_AWARE_ALLOWED))
        aware.set(fn.name, `${rel(file)}:${fn.line}`);
  const found: string[] = [];
  for (const file of files.filter((f) => rel(f).startsWith("src/") && !inside(f, STORE))) {
    for (const i of storeImportsOf(file))
      if (aware.has(i.name))
        found.push(
          `${rel(file)}:${i.line}: imports ${i.name} (${aware.get(i.name)}), which asks which database it runs on`,
        );
  }
  return found;
}

/**
 * Rules written once, each in the one store file that owns it: code elsewhere in src/ that restates
 * one (compares a document's generation, a memory's forget_after or its is_forgotten flag) instead
 * of calling it.
 */
const RULES: { owner: string; what: string; pattern: RegExp }[] = [
  {
    owner: "src/engine/store/documents.ts",
    what: "the stale-generation rule (documentAtGeneration, lockedAtGeneration)",
    pattern: /\bgeneration\s*(!==|===|!=)|\bgeneration\s*=\s*\$\d/,
  },
  {
    owner: "src/engine/store/documents.ts",
    what: "the moved-namespace check (lockedAtGeneration)",
    pattern: /new DocumentMovedError\(/,
  },
  {
    owner: "src/engine/store/memories.ts",
    what: "the live-memory rule (isForgotten, isExpired, liveMemory, expiredMemory, currentMemory)",
    pattern: /forget_after\s*(>|<|===|!==|IS\s)|is_forgotten\s*=\s*0/,
  },
];

/** Where a rule is restated outside its owner (migrations and exports, which only copy columns, aside). */
function rulesRestated(): string[] {
  const found: string[] = [];
  for (const rule of RULES) {
    found.push(
      ...codeLinesMatching(
        [[rule.pattern, rule.what]],
        (f) =>
          rel(f).startsWith("src/engine/") &&
          rel(f) !== rule.owner &&
          !/store\/(schema|export)\.ts$|store\/postgres\//.test(rel(f)),
      ),
    );
  }
  return found;
}

const PIPELINE = join(SRC, "engine", "pipeline");
/** What pipeline/ (the job queue, its loops and threads) may import besides itself: layers below it. */
const BELOW_PIPELINE = ["store", "ingest", "text", "models"].map((d) => join(SRC, "engine", d));

describe("the source tree's structure", () => {
  it("keeps the database backends inside src/engine/store/ (nothing above it branches on one)", () => {
    const found = codeLinesMatching(
      BACKEND_PATTERNS,
      (f) => rel(f).startsWith("src/") && !inside(f, STORE) && !(rel(f) in BACKEND_ALLOWED),
    );
    expect(found, found.join("\n")).toEqual([]);
    // The patterns find the store's own backend code.
    const storeText = readFileSync(join(STORE, "db.ts"), "utf8").split("\n");
    expect(BACKEND_PATTERNS.filter(([p]) => storeText.some((l) => p.test(l))).length).toBeGreaterThanOrEqual(
      2,
    );
  });

  it("store/ imports nothing from the layers above it (only src/api/, src/engine/text/ and itself)", () => {
    const upward: string[] = [];
    for (const file of files.filter((f) => inside(f, STORE))) {
      for (const { line, target } of graph.get(file)!) {
        if (ABOVE_STORE.some((d) => inside(target, d)) || ABOVE_STORE_FILES.includes(target)) {
          upward.push(`${rel(file)}:${line} imports ${rel(target)}`);
        }
      }
    }
    expect(upward, upward.join("\n")).toEqual([]);
  });

  it("routes call services, never the store (they may name its types)", () => {
    const routes = join(SRC, "engine", "routes");
    const direct = files
      .filter((f) => inside(f, routes))
      .flatMap((f) =>
        valueImportsOf(f)
          .filter((i) => inside(i.target, STORE))
          .map((i) => `${rel(f)}:${i.line} imports ${rel(i.target)}`),
      );
    expect(direct, direct.join("\n")).toEqual([]);
    // The check sees a route's value imports and tells a type-only import of the store from one.
    const documents = join(routes, "documents.ts");
    expect(
      valueImportsOf(documents).some((i) => i.target === join(SRC, "engine", "services", "documents.ts")),
    ).toBe(true);
    expect(graph.get(documents)!.some((i) => inside(i.target, STORE))).toBe(true);
  });

  it("has no import loop anywhere in src/", () => {
    const edges = new Map([...graph].map(([f, imports]) => [f, imports.map((i) => i.target)]));
    const loops = importCycles(edges).map((c) => {
      const members = new Set(c);
      const edges = c.flatMap((f) =>
        graph
          .get(f)!
          .filter((i) => members.has(i.target))
          .map((i) => `${rel(f)}:${i.line} -> ${rel(i.target)}`),
      );
      return `loop of ${c.length} files:\n  ${edges.join("\n  ")}`;
    });
    expect(loops, loops.join("\n")).toEqual([]);
  });

  it("keeps SQL inside src/engine/store/", () => {
    const found = sqlOutsideStore();
    expect(found, found.join("\n")).toEqual([]);
  });

  it("writes the store's shared statements in SQL both databases speak (nothing is translated at run time)", () => {
    const found = codeLinesMatching(
      ONE_DATABASE_SQL,
      (f) => inside(f, STORE) && !inside(f, join(STORE, "postgres")) && !(rel(f) in ONE_DATABASE_ONLY),
    );
    expect(found, found.join("\n")).toEqual([]);
    // The patterns find what PostgreSQL would refuse.
    const refused = [
      "id = ?",
      "WHERE a IS ?1",
      "FROM json_each($1) j",
      "INSERT OR IGNORE INTO t",
      "julianday(x)",
    ];
    for (const line of refused)
      expect(
        ONE_DATABASE_SQL.some(([p]) => p.test(line)),
        line,
      ).toBe(true);
  });

  it("opens no transaction and takes no lock outside src/engine/store/ (writes have one owner)", () => {
    const found = transactionsOutsideStore();
    expect(found, found.join("\n")).toEqual([]);
    // The patterns find the store's own transactions and locks, and an import of a helper.
    const db = readFileSync(join(STORE, "db.ts"), "utf8").split("\n");
    expect(TRANSACTION_PATTERNS.filter(([p]) => db.some((l) => p.test(l))).length).toBe(2);
    const connect = readFileSync(join(STORE, "postgres", "connect.ts"), "utf8").split("\n");
    expect(connect.some((l) => TRANSACTION_PATTERNS[2]![0].test(l))).toBe(true);
    expect(storeImportsOf(join(STORE, "forgotten.ts")).length).toBeGreaterThan(0);
    expect(storeImportsOf(join(STORE, "forgotten.ts")).some((i) => TRANSACTION_HELPERS.has(i.name))).toBe(
      true,
    );
  });

  it("lets no caller above store/ choose by backend (no store function that tells the backend is imported above it)", () => {
    const found = backendSwitches();
    expect(found, found.join("\n")).toEqual([]);
    // The check sees the store's backend-aware functions and an import of one.
    const aware = files
      .filter((f) => inside(f, STORE))
      .flatMap(exportedFunctions)
      .filter((fn) => ASKS_BACKEND.test(fn.body))
      .map((fn) => fn.name);
    expect(aware).toEqual(expect.arrayContaining(["databaseBackend", "checkpoint"]));
    expect(storeImportsOf(join(SRC, "engine", "app.ts")).some((i) => i.name === "databaseBackend")).toBe(
      true,
    );
    expect(ASKS_BACKEND.test("  return db.dialect.remote;")).toBe(true);
  });

  it("keeps pipeline/ below the services, memory and engine it runs for (it imports the store, ingest, text and models only)", () => {
    const upward = files
      .filter((f) => inside(f, PIPELINE))
      .flatMap((f) =>
        graph
          .get(f)!
          .filter((i) => i.target.startsWith(`${SRC}/engine/`) && !inside(i.target, PIPELINE))
          .filter((i) => !BELOW_PIPELINE.some((d) => inside(i.target, d)))
          .map((i) => `${rel(f)}:${i.line} imports ${rel(i.target)}`),
      );
    expect(upward, upward.join("\n")).toEqual([]);
    // The graph holds pipeline's own imports of the store.
    expect(graph.get(join(PIPELINE, "worker.ts"))!.some((i) => inside(i.target, STORE))).toBe(true);
  });

  it("writes each rule once: a document's generation, its move, a memory's liveness", () => {
    const found = rulesRestated();
    expect(found, found.join("\n")).toEqual([]);
    // Each rule is found in its owner, and a restatement would be found.
    for (const rule of RULES) {
      const owner = readFileSync(join(ROOT, rule.owner), "utf8").split("\n");
      expect(
        owner.some((l) => rule.pattern.test(l)),
        rule.what,
      ).toBe(true);
    }
    expect(RULES[0]!.pattern.test("if (!row || row.generation !== doc.generation) return undefined;")).toBe(
      true,
    );
    expect(RULES[2]!.pattern.test("(c) => c.row.forget_after === null || c.row.forget_after > at")).toBe(
      true,
    );
  });

  it("finds what it looks for (the checks can fail)", () => {
    // Tarjan finds a loop through three files and a file importing itself, and nothing in a chain.
    const loop = importCycles(
      new Map([
        ["a", ["b"]],
        ["b", ["c"]],
        ["c", ["a", "d"]],
        ["d", []],
        ["e", ["e"]],
      ]),
    );
    expect(loop.map((c) => c.sort().join(","))).toEqual(["a,b,c", "e"]);
    expect(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", []],
        ]),
      ),
    ).toEqual([]);
    // The graph holds real edges, and the SQL patterns match the store's own statements.
    expect(graph.get(join(STORE, "memories.ts"))!.some((i) => i.target === join(STORE, "db.ts"))).toBe(true);
    const storeText = readFileSync(join(STORE, "memories.ts"), "utf8");
    expect(SQL_PATTERNS.filter(([p]) => storeText.split("\n").some((l) => p.test(l))).length).toBeGreaterThan(
      3,
    );
    expect(files.length).toBeGreaterThan(100);
  });
});
