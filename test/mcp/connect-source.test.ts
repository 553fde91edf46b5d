import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/wait.js";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

const OAUTH_ENV = {
  MEMCTX_GITHUB_CLIENT_ID: "test-client-id",
  MEMCTX_GITHUB_CLIENT_SECRET: "test-client-secret",
};

describe("connect_source", () => {
  let t: TestEngine;
  let s: Session;
  let site: Server;
  let siteUrl: string;
  beforeAll(async () => {
    Object.assign(process.env, OAUTH_ENV);
    // A small website on 127.0.0.1 for the crawler (the engine is told loopback is fine here).
    site = createServer((req, res) => {
      if (req.url === "/robots.txt") return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        "<html><head><title>Handbook</title></head><body><p>Deploys happen on Tuesdays.</p></body></html>",
      );
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    t = await startEngine({ allowPrivateNetwork: true });
    s = await connect({ client: t.client, namespace: "sources" });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
    await new Promise<void>((r) => site.close(() => r()));
    for (const k of Object.keys(OAUTH_ENV)) delete process.env[k];
  });

  it("returns the authorization link and its expiry for an OAuth provider", async () => {
    const res = await call(s.mcp, "connect_source", {
      provider: "github",
      redirectUrl: "http://localhost:5555/callback",
    });
    const out = structured<{ id: string; authorization: { url: string; expiresAt: string } }>(res);
    expect(out.authorization.url).toMatch(/^https:\/\/github\.com\/login\/oauth\/authorize\?/);
    expect(Date.parse(out.authorization.expiresAt)).toBeGreaterThan(Date.now());
    expect(text(res)).toContain(out.authorization.url);
  });

  it("reports a provider without an OAuth app as a server setting, not a field to fix", async () => {
    const res = await call(s.mcp, "connect_source", {
      provider: "notion",
      redirectUrl: "http://localhost:5555/callback",
    });
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/not set up for this: .*MEMCTX_NOTION_CLIENT_ID.*setting of the server/);
    expect(text(res)).not.toMatch(/Fix the named field/);
  });

  it("returns the connector and its run for a configuration provider", async () => {
    const out = structured<{ connector: { provider: string }; run: { system: { status: string } } | null }>(
      await call(s.mcp, "connect_source", {
        provider: "web-crawler",
        config: { startUrl: siteUrl },
        documentLimit: 5,
      }),
    );
    expect(out.connector.provider).toBe("web-crawler");
    expect(out.run?.system.status).toBeTruthy();
  });

  it("reports a connector's status and re-syncs it with an action, without a tool per endpoint", async () => {
    const created = structured<{ id: string }>(
      await call(s.mcp, "connect_source", { provider: "web-crawler", config: { startUrl: siteUrl } }),
    );
    // The first sync runs to its end: its document is then there.
    const waitForRun = async () =>
      (
        await until(
          () => t.client.ns("sources").connectors.get(created.id),
          (c) => {
            const status = c.latestRun?.system.status;
            return status !== undefined && status !== "queued" && status !== "running";
          },
          "the sync to finish",
        )
      ).latestRun!;
    const first = await waitForRun();

    const status = await call(s.mcp, "connect_source", { action: "status", id: created.id });
    const out = structured<{ id: string; provider: string; run: { id: string; system: { status: string } } }>(
      status,
    );
    expect(out).toMatchObject({ id: created.id, provider: "web-crawler" });
    expect(out.run.id).toBe(first.id);
    expect(text(status)).toContain(
      `Connector ${created.id} (web-crawler): sync ${first.id} ${first.system.status}`,
    );

    const all = await call(s.mcp, "connect_source", { action: "status" });
    const listed = structured<{ connectors: { id: string }[] }>(all).connectors.map((c) => c.id);
    expect(listed).toContain(created.id);
    expect(text(all)).toContain(`- ${created.id} (web-crawler)`);

    const resync = await call(s.mcp, "connect_source", { action: "sync", id: created.id });
    const again = structured<{ run: { id: string } }>(resync);
    expect(again.run.id).not.toBe(first.id);
    expect(text(resync)).toMatch(/^Re-sync started\./);
    await waitForRun();

    const noId = await call(s.mcp, "connect_source", { action: "sync" });
    expect(noId.isError).toBe(true);
    expect(text(noId)).toMatch(/needs the connector's id/);
    const unknown = await call(s.mcp, "connect_source", { action: "status", id: "con_missing" });
    expect(unknown.isError).toBe(true);
    const noProvider = await call(s.mcp, "connect_source", {});
    expect(noProvider.isError).toBe(true);
    expect(text(noProvider)).toMatch(/needs provider/);
  });

  it("names the missing field of a configuration", async () => {
    const res = await call(s.mcp, "connect_source", { provider: "web-crawler", config: {} });
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/startUrl/);
  });
});
