import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Connector } from "../../../src/api/index.js";
import { MemoryClient } from "../../../src/client/index.js";
import { connectorService } from "../../../src/engine/connectors/service.js";
import { type RunningServer, startServer } from "../../../src/engine/server.js";
import { openDatabase } from "../../../src/engine/store/db.js";
import { recentRuns } from "../../../src/engine/store/sync-runs.js";
import { TEST_KEY, tempDir, testDatabase } from "../../support/harness.js";
import { type HttpServer, startHttpServer as startSite } from "../../support/http-server.js";
import { until } from "../../support/wait.js";

/** The processing loops look for due connectors this often in these tests (default: a minute). */
const CHECK_MS = 150;

let site: HttpServer;
let pages: Map<string, { body: string; etag: string }>;
let dir: ReturnType<typeof tempDir>;
const servers: RunningServer[] = [];
const clients: MemoryClient[] = [];
const savedCheck = process.env.MEMCTX_CONNECTOR_CHECK_MS;

const page = (title: string, text: string) =>
  `<html><head><title>${title}</title></head><body><p>${text}</p></body></html>`;

beforeAll(() => {
  // Read where the processing loops start (worker threads inherit it).
  process.env.MEMCTX_CONNECTOR_CHECK_MS = String(CHECK_MS);
});
afterAll(() => {
  if (savedCheck === undefined) delete process.env.MEMCTX_CONNECTOR_CHECK_MS;
  else process.env.MEMCTX_CONNECTOR_CHECK_MS = savedCheck;
});

beforeEach(async () => {
  dir = tempDir("memctx-schedule-");
  pages = new Map([["/", { body: page("Home", "Version one."), etag: '"v1"' }]]);
  site = await startSite((req, res) => {
    const p = pages.get(req.url ?? "/");
    if (!p) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": "text/html", etag: p.etag });
    res.end(p.body);
  });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) await s.close();
  await site.close();
  dir.remove();
});

async function serve(workers = 1) {
  const server = await startServer({
    dataDir: dir.path,
    port: 0,
    host: "127.0.0.1",
    apiKey: TEST_KEY,
    workers,
    allowPrivateNetwork: true,
    embedder: null,
    log: () => {},
  });
  servers.push(server);
  const client = new MemoryClient({ baseUrl: server.url, apiKey: TEST_KEY, maxRetries: 0 });
  clients.push(client);
  return { server, ns: client.ns("team") };
}

async function stop(server: RunningServer) {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

/** Waits until the connector's latest run is finished and is not `notRun`. */
const nextFinishedRun = (read: () => Promise<Connector>, notRun: string | undefined) =>
  until(
    read,
    ({ latestRun: run }) =>
      run !== null &&
      run !== undefined &&
      run.id !== notRun &&
      (run.system.status === "done" || run.system.status === "failed"),
    "a new finished run",
  );

describe("connectors sync on a schedule", () => {
  it("syncs again after its interval, run by the processing loop, with no trigger", async () => {
    const { ns } = await serve();
    const { id } = await ns.connectors.create({
      provider: "web-crawler",
      config: { startUrl: site.url },
      syncIntervalSeconds: 1,
    });
    const first = await nextFinishedRun(() => ns.connectors.get(id), undefined);
    expect(first.latestRun?.counts).toMatchObject({ added: 1 });
    expect(first.syncIntervalSeconds).toBe(1);
    expect(Date.parse(first.nextSyncAt!) - Date.parse(first.latestRun!.system.finishedAt!)).toBe(1000);

    pages.set("/", { body: page("Home", "Version two."), etag: '"v2"' });
    const second = await nextFinishedRun(() => ns.connectors.get(id), first.latestRun!.id);
    expect(second.latestRun?.system.status).toBe("done");
    expect(second.latestRun?.counts).toMatchObject({ updated: 1 });
    // At least the interval after the first run ended.
    expect(
      Date.parse(second.latestRun!.system.startedAt!) - Date.parse(first.latestRun!.system.finishedAt!),
    ).toBeGreaterThanOrEqual(1000);
    const docs = await ns.documents.list({ limit: 10 });
    expect(docs.documents.map((d) => d.content)).toEqual(["Version two."]);
  });

  it("defaults to daily, takes 0 for no schedule, and refuses a bad interval with a 400 naming it", async () => {
    const { server, ns } = await serve(0);
    const daily = await ns.connectors.create({ provider: "web-crawler", config: { startUrl: site.url } });
    expect((await ns.connectors.get(daily.id)).syncIntervalSeconds).toBe(86_400);
    const send = (method: string, path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const negative = await send("POST", "/ns/team/connectors", {
      provider: "web-crawler",
      config: { startUrl: site.url },
      syncIntervalSeconds: -1,
    });
    expect(negative.status).toBe(400);
    expect(((await negative.json()) as { details: string }).details).toContain(
      "syncIntervalSeconds must be 0 (no scheduled syncs) or more",
    );
    const bad = await send("PATCH", `/ns/team/connectors/${daily.id}`, { syncIntervalSeconds: 1.5 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { details: string }).details).toContain(
      "syncIntervalSeconds must be an integer",
    );
    // Refused: nothing changed, and only the first connector exists.
    expect((await ns.connectors.list()).connectors.map((c) => c.syncIntervalSeconds)).toEqual([86_400]);
    const off = await ns.connectors.update(daily.id, { syncIntervalSeconds: 0 });
    expect(off).toMatchObject({ syncIntervalSeconds: 0, nextSyncAt: null });
    // Even a year from now, a connector without a schedule is not due.
    const service = connectorService(server.engine.context);
    const db = server.engine.context.db;
    // Its first run is still queued (no workers): nothing to schedule until it ends, then nothing either.
    expect(await service.queueDueSyncs(new Date(Date.now() + 365 * 86_400_000))).toBe(0);
    expect(await recentRuns(db, daily.id, 10)).toHaveLength(1);
  });

  it("keeps its schedule across a restart: due from the last run in the store", async () => {
    const a = await serve();
    const create = () =>
      a.ns.connectors.create({
        provider: "web-crawler",
        config: { startUrl: site.url },
        syncIntervalSeconds: 3600,
      });
    const { id } = await create();
    const { id: witness } = await create();
    const first = await nextFinishedRun(() => a.ns.connectors.get(id), undefined);
    const witnessFirst = await nextFinishedRun(() => a.ns.connectors.get(witness), undefined);
    await stop(a.server);

    /** Makes a connector's runs an hour older in the store, as if the hour had passed while it was down. */
    const anHourAgo = async (connector: string) => {
      const raw = await openDatabase(dir.path, testDatabase());
      await raw
        .prepare(
          "UPDATE sync_runs SET created_at = $1, started_at = $2, finished_at = $3 WHERE connector_id = $4",
        )
        .run(...Array(3).fill(new Date(Date.now() - 3601_000).toISOString()), connector);
      await raw.close();
    };

    // Restarted within the hour: no run. The witness, whose hour has passed, shows that the
    // schedule was looked at (one check queues every due connector).
    await anHourAgo(witness);
    const b = await serve();
    await nextFinishedRun(() => b.ns.connectors.get(witness), witnessFirst.latestRun!.id);
    expect((await b.ns.connectors.get(id)).latestRun?.id).toBe(first.latestRun!.id);
    await stop(b.server);

    // The hour passed while it was down: the next start syncs.
    await anHourAgo(id);
    const c = await serve();
    const after = await nextFinishedRun(() => c.ns.connectors.get(id), first.latestRun!.id);
    expect(after.latestRun?.system.status).toBe("done");
  });

  it("two processes looking at once queue one run (the existing 409 on a running sync)", async () => {
    // No processing loops: the runs stay queued, so only the scheduling is seen.
    const a = await serve(0);
    const b = await serve(0);
    const { id } = await a.ns.connectors.create({
      provider: "web-crawler",
      config: { startUrl: site.url },
      syncIntervalSeconds: 60,
    });
    const db = a.server.engine.context.db;
    // The first run, queued at create, ends; the next is due a minute later.
    await db
      .prepare("UPDATE sync_runs SET status = 'done', finished_at = $1 WHERE connector_id = $2")
      .run(new Date().toISOString(), id);
    const sa = connectorService(a.server.engine.context);
    const sb = connectorService(b.server.engine.context);
    expect(await sa.queueDueSyncs(new Date(Date.now() + 30_000))).toBe(0);
    const later = new Date(Date.now() + 61_000);
    expect((await sa.queueDueSyncs(later)) + (await sb.queueDueSyncs(later))).toBe(1);
    expect(await sb.queueDueSyncs(later)).toBe(0);
    const runs = await recentRuns(db, id, 10);
    expect(runs.map((r) => r.status)).toEqual(["queued", "done"]);
    // A trigger meanwhile answers 409 as before.
    await expect(b.ns.connectors.sync(id)).rejects.toMatchObject({ status: 409 });
  });
});
