/**
 * Ingest to `done` through `memctx serve` replicas on one store (issue 12): DOCUMENTS synthetic
 * conversations added over HTTP, 8 at a time, spread round-robin over the replicas; the time from
 * the first add until every document is `done` (read straight from the store), with the documents
 * in one namespace and spread over NAMESPACES (tenants). On PostgreSQL with one and with two
 * replicas on one schema; on SQLite with one (a data directory has one server),
 * the baseline to read the PostgreSQL rows against. Each replica runs with serve's default
 * processing (2 loops); on a machine with fewer cores than replicas x processing threads the
 * replicas share the same cores, which bounds what a second replica can add.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/engine/store/db.js";
import {
  API_KEY,
  type BackendName,
  type Budget,
  backendName,
  newStorage,
  round,
  type ServeChild,
  startServe,
} from "./common.js";
import { Corpus } from "./corpus.js";

export interface ReplicaRow {
  replicas: number;
  /** Namespaces the documents are spread over (round-robin): one team, or several tenants. */
  namespaces: number;
  documents: number;
  secondsToDone: number | null;
  donePerSecond: number | null;
  /** Documents per second relative to one replica on the same backend and namespaces. */
  speedup: number | null;
}

export interface ReplicasResult {
  backend: BackendName;
  concurrency: number;
  rows: ReplicaRow[];
  stopped: boolean;
}

const CONCURRENCY = 8;
const WORKERS = 2;
/** The tenants of the second measurement. */
const NAMESPACES = 8;

async function once(
  cli: string[],
  replicas: number,
  namespaces: number,
  documents: number,
  budget: Budget,
): Promise<ReplicaRow> {
  const storage = newStorage(`replicas_${replicas}_${namespaces}`);
  const dirs = Array.from({ length: replicas }, () => mkdtempSync(join(tmpdir(), "memctx-bench-replica-")));
  // Replicas share the key that seals connector secrets (the data directories hold nothing else).
  const env = { ...storage.env, MEMCTX_SECRET_KEY: "bench-replicas-secret" };
  const servers: ServeChild[] = [];
  const db = { current: null as Awaited<ReturnType<typeof openDatabase>> | null };
  try {
    // One first: it creates and migrates the store; the others find it done.
    servers.push(await startServe(cli, dirs[0]!, WORKERS, env));
    servers.push(
      ...(await Promise.all(dirs.slice(1).map(async (d) => await startServe(cli, d, WORKERS, env)))),
    );
    db.current = await openDatabase(dirs[0]!, { databaseUrl: storage.databaseUrl });
    const done = db.current.prepare("SELECT count(*) AS n FROM documents WHERE status = 'done'");
    const corpus = new Corpus();
    const docs = Array.from({ length: documents }, (_, i) => corpus.document(i));
    const t0 = performance.now();
    let next = 0;
    let accepted = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < docs.length && !budget.spent()) {
          const i = next++;
          const s = servers[i % servers.length]!;
          const res = await fetch(`${s.url}/ns/bench-${i % namespaces}/document`, {
            method: "POST",
            headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ content: docs[i]!.text, date: docs[i]!.date }),
          });
          if (res.status !== 200) throw new Error(`add ${i}: ${res.status} ${await res.text()}`);
          accepted++;
        }
      }),
    );
    let seconds: number | null = null;
    while (!budget.spent()) {
      if (((await done.get()) as { n: number }).n >= accepted) {
        seconds = (performance.now() - t0) / 1000;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return {
      replicas,
      namespaces,
      documents: accepted,
      secondsToDone: round(seconds, 2),
      donePerSecond: seconds ? round(accepted / seconds, 1) : null,
      speedup: null,
    };
  } finally {
    await db.current?.close();
    await Promise.all(servers.map((s) => s.close()));
    await storage.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

export async function benchReplicas(
  cli: string[],
  documents: number,
  budget: Budget,
): Promise<ReplicasResult> {
  const counts = backendName() === "postgres" ? [1, 2] : [1];
  const rows: ReplicaRow[] = [];
  // One namespace: every document's dreaming takes turns (one dream job per namespace), so a
  // second replica adds little there; spread over tenants' namespaces, their writes go on at once.
  for (const namespaces of [1, NAMESPACES]) {
    const here: ReplicaRow[] = [];
    for (const n of counts) {
      if (budget.spent()) break;
      here.push(await once(cli, n, namespaces, documents, budget));
    }
    const base = here[0]?.donePerSecond;
    for (const r of here) r.speedup = base && r.donePerSecond ? round(r.donePerSecond / base, 2) : null;
    rows.push(...here);
  }
  return { backend: backendName(), concurrency: CONCURRENCY, rows, stopped: budget.stopped };
}
