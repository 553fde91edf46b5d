import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectorService } from "../../../src/engine/connectors/service.js";
import { ConflictError, InputError, NotFoundError } from "../../../src/engine/errors.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import { ensureNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization } from "../../../src/engine/store/organizations.js";
import { getRun } from "../../../src/engine/store/sync-runs.js";
import { type HttpServer, startHttpServer } from "../../support/http-server.js";
import { until } from "../../support/wait.js";
import { type AuthServer, startAuthServer } from "./oauth-server.js";

let dir: string;
let engines: Engine[];
let site: HttpServer;
let pages: Map<string, { body: string; etag: string }>;

const page = (title: string, text: string, links: string[] = []) =>
  `<html><head><title>${title}</title></head><body><p>${text}</p>${links.map((l) => `<a href="${l}">x</a>`).join("")}</body></html>`;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "memctx-connectors-"));
  engines = [];
  pages = new Map([
    ["/", { body: page("Home", "Welcome home.", ["/one", "/two"]), etag: '"h1"' }],
    ["/one", { body: page("One", "First page."), etag: '"o1"' }],
    ["/two", { body: page("Two", "Second page."), etag: '"t1"' }],
  ]);
  site = await startHttpServer((req, res) => {
    const p = pages.get(req.url ?? "/");
    if (!p) {
      res.writeHead(404);
      return res.end();
    }
    if (req.headers["if-none-match"] === p.etag) {
      res.writeHead(304);
      return res.end();
    }
    res.writeHead(200, { "content-type": "text/html", etag: p.etag });
    res.end(p.body);
  });
});

afterEach(async () => {
  for (const engine of engines) await engine.close();
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

async function engine(workers: number): Promise<Engine> {
  const e = await openEngine({
    dataDir: dir,
    workers,
    allowPrivateNetwork: true,
    embedder: null,
    log: () => {},
  });
  engines.push(e);
  return e;
}

const finished = (e: Engine, runId: string) =>
  until(
    async () => (await getRun(e.context.db, runId))!,
    (run) => run.status === "done" || run.status === "failed",
    `run ${runId} to finish`,
  );

/** The connector service of an engine, and its "team" namespace (made here). */
async function teamConnectors(e: Engine) {
  const team = await ensureNamespace(
    e.context.db,
    (await ensureOrganization(e.context.db, "local")).id,
    "team",
  );
  return { service: connectorService(e.context), team };
}

const connectorDocs = async (e: Engine, id: string) =>
  (await e.context.db
    .prepare(
      "SELECT custom_id, source, title, content, metadata FROM documents WHERE connector_id = $1 ORDER BY custom_id",
    )
    .all(id)) as { custom_id: string; source: string; title: string; content: string; metadata: string }[];

describe("connector service", () => {
  it("syncs a web-crawler connector into documents, then updates, keeps and deletes on the next run", async () => {
    const e = await engine(1);
    const { service, team } = await teamConnectors(e);
    const created = await service.create(team.organization_id, team.name, {
      provider: "web-crawler",
      config: { startUrl: site.url },
      documentLimit: 10,
    });
    expect(created.authorization).toBeNull();

    const first = await service.get(team, created.id, ["syncs"]);
    const run1 = await finished(e, first.latestRun!.id);
    expect(run1.status).toBe("done");
    expect(JSON.parse(run1.counts!)).toEqual({
      added: 3,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      skipped: 0,
      failed: 0,
    });
    const docs = await connectorDocs(e, created.id);
    expect(docs.map((d) => d.custom_id)).toEqual([
      `connector:${created.id}:${site.url}/`,
      `connector:${created.id}:${site.url}/one`,
      `connector:${created.id}:${site.url}/two`,
    ]);
    expect((await docs)[1]).toMatchObject({ source: "web-crawler", title: "One", content: "First page." });
    expect(JSON.parse((await docs)[1]!.metadata)).toMatchObject({
      externalId: `${site.url}/one`,
      connectorId: created.id,
    });

    pages.delete("/two");
    pages.set("/one", { body: page("One", "First page, edited."), etag: '"o2"' });
    const { runId } = await service.sync(team, created.id);
    const run2 = await finished(e, runId);
    expect(JSON.parse(run2.counts!)).toEqual({
      added: 0,
      updated: 1,
      unchanged: 1,
      deleted: 1,
      skipped: 0,
      failed: 0,
    });
    const after = await connectorDocs(e, created.id);
    expect(after.map((d) => d.custom_id)).toEqual([
      `connector:${created.id}:${site.url}/`,
      `connector:${created.id}:${site.url}/one`,
    ]);
    expect((await after)[1]!.content).toBe("First page, edited.");

    const read = await service.get(team, created.id, ["syncs"]);
    expect(read.syncs).toHaveLength(2);
    expect(read.latestRun).toMatchObject({ id: runId, system: { status: "done" } });
  });

  it("answers 409 to a second sync while one is queued or running", async () => {
    // No workers: the first run stays queued.
    const e = await engine(0);
    const { service, team } = await teamConnectors(e);
    const { id } = await service.create(team.organization_id, team.name, {
      provider: "web-crawler",
      config: { startUrl: site.url },
    });
    await expect(service.sync(team, id)).rejects.toBeInstanceOf(ConflictError);
  });

  it("refuses bad config with a 400 naming the field, and hides secrets when reading a connector", async () => {
    const e = await engine(0);
    const { service, team } = await teamConnectors(e);
    await expect(
      (() => service.create(team.organization_id, team.name, { provider: "web-crawler", config: {} }))(),
    ).rejects.toThrow(expect.objectContaining({ field: "config.startUrl" }));
    await expect(
      (() => service.create(team.organization_id, team.name, { provider: "github" }))(),
    ).rejects.toThrow(expect.objectContaining({ field: "redirectUrl" }));
    const { id } = await service.create(team.organization_id, team.name, {
      provider: "s3",
      config: { bucket: "notes", accessKeyId: "AKID", secretAccessKey: "very-secret", endpoint: site.url },
    });
    const read = await service.get(team, id);
    expect(read.config).toMatchObject({
      bucket: "notes",
      accessKeyId: "AKID",
      secretAccessKey: "[redacted]",
    });
    expect(JSON.stringify(read)).not.toContain("very-secret");
  });

  it("deletes a connector with or without its documents", async () => {
    const e = await engine(1);
    const { service, team } = await teamConnectors(e);
    const a = await service.create(team.organization_id, team.name, {
      provider: "web-crawler",
      config: { startUrl: site.url },
    });
    await finished(e, (await service.get(team, a.id)).latestRun!.id);
    expect(await service.remove(team, a.id, true)).toEqual({ id: a.id, deleted: true, documentsDeleted: 3 });
    expect(await connectorDocs(e, a.id)).toEqual([]);
    await expect((async () => await service.get(team, a.id))()).rejects.toThrow(NotFoundError);
  });
});

describe("connector service OAuth", () => {
  let auth: AuthServer;
  const saved = { ...process.env };
  beforeEach(async () => {
    auth = await startAuthServer();
  });
  afterEach(async () => {
    process.env = { ...saved };
    await auth.close();
  });

  it("keeps a pending connector out of reads until the callback exchanges the code, then syncs it", async () => {
    Object.assign(process.env, {
      MEMCTX_GITHUB_CLIENT_ID: auth.clientId,
      MEMCTX_GITHUB_CLIENT_SECRET: auth.clientSecret,
      MEMCTX_GITHUB_AUTHORIZE_URL: `${auth.url}/authorize`,
      MEMCTX_GITHUB_TOKEN_URL: `${auth.url}/token`,
      MEMCTX_GITHUB_API_URL: auth.url,
    });
    const e = await engine(0);
    const { service, team } = await teamConnectors(e);
    const redirectUrl = "http://127.0.0.1:8787/connectors/oauth/callback";
    const created = await service.create(team.organization_id, team.name, {
      provider: "github",
      redirectUrl,
    });
    expect(created.authorization!.url.startsWith(`${auth.url}/authorize?`)).toBe(true);
    expect(Date.parse(created.authorization!.expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(await service.list(team.organization_id, team)).toEqual([]);
    await expect((async () => await service.get(team, created.id))()).rejects.toThrow(NotFoundError);

    const answer = await fetch(created.authorization!.url, { redirect: "manual" });
    const back = new URL(answer.headers.get("location")!);
    const connector = await service.completeAuthorization({
      state: back.searchParams.get("state")!,
      code: back.searchParams.get("code")!,
    });
    expect(connector).toMatchObject({ id: created.id, provider: "github", account: "octo-user" });
    expect((await service.list(team.organization_id, team)).map((c) => c.id)).toEqual([created.id]);
    expect((await service.get(team, created.id)).latestRun?.system.status).toBe("queued");
    // The state is single-use.
    await expect(
      service.completeAuthorization({ state: back.searchParams.get("state")!, code: "x" }),
    ).rejects.toThrow(InputError);
  });

  it("exchanges exactly one code when two callbacks carry the same state at once", async () => {
    Object.assign(process.env, {
      MEMCTX_GITHUB_CLIENT_ID: auth.clientId,
      MEMCTX_GITHUB_CLIENT_SECRET: auth.clientSecret,
      MEMCTX_GITHUB_AUTHORIZE_URL: `${auth.url}/authorize`,
      MEMCTX_GITHUB_TOKEN_URL: `${auth.url}/token`,
      MEMCTX_GITHUB_API_URL: auth.url,
    });
    const e = await engine(0);
    const http = createServer(async (req, res) => {
      const answer = await e.fetch(new Request(`http://127.0.0.1${req.url}`));
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(await answer.text());
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      const { service, team } = await teamConnectors(e);
      const created = await service.create(team.organization_id, team.name, {
        provider: "github",
        redirectUrl: `${base}/connectors/oauth/callback`,
      });
      // The same link opened twice: two codes, one state.
      const codes = await Promise.all(
        [1, 2].map(async () => {
          const answer = await fetch(created.authorization!.url, { redirect: "manual" });
          return new URL(answer.headers.get("location")!).searchParams;
        }),
      );
      expect(codes[0]!.get("state")).toBe(codes[1]!.get("state"));
      expect(codes[0]!.get("code")).not.toBe(codes[1]!.get("code"));
      const answers = await Promise.all(codes.map((p) => fetch(`${base}/connectors/oauth/callback?${p}`)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      expect(auth.state.codeExchanges).toBe(1);
      expect(await service.get(team, created.id)).toMatchObject({ account: "octo-user" });
    } finally {
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it("spends the state on a refused authorization: the connector expires", async () => {
    Object.assign(process.env, {
      MEMCTX_GITHUB_CLIENT_ID: auth.clientId,
      MEMCTX_GITHUB_CLIENT_SECRET: auth.clientSecret,
      MEMCTX_GITHUB_AUTHORIZE_URL: `${auth.url}/authorize`,
      MEMCTX_GITHUB_TOKEN_URL: `${auth.url}/token`,
    });
    const e = await engine(0);
    const { service, team } = await teamConnectors(e);
    const created = await service.create(team.organization_id, team.name, {
      provider: "github",
      redirectUrl: "http://127.0.0.1:8787/connectors/oauth/callback",
    });
    const state = new URL(created.authorization!.url).searchParams.get("state")!;
    await expect(service.completeAuthorization({ state, error: "access_denied" })).rejects.toMatchObject({
      title: "Authorization refused",
    });
    await expect(service.completeAuthorization({ state, code: "late" })).rejects.toThrow(InputError);
    expect(auth.state.codeExchanges).toBe(0);
    const row = await e.context.db
      .prepare("SELECT state, oauth_state FROM connectors WHERE id = $1")
      .get(created.id);
    expect(row).toEqual({ state: "expired", oauth_state: null });
  });
});
