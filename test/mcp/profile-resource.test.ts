import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, connect, type Session, startEngine, structured, type TestEngine } from "./helpers.js";

describe("the profile resource", () => {
  let t: TestEngine;
  let s: Session;
  const updates: string[] = [];
  const logs: string[] = [];
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "alice" }, {}, (c) => {
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
      });
      c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(String(n.params.data));
      });
    });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("lists the profile of the session's namespace, and only that one", async () => {
    const { resources } = await s.mcp.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["memctx://profile/alice"]);
    const { resourceTemplates } = await s.mcp.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(["memctx://profile/{namespace}"]);
  });

  it("declares that clients can subscribe", () => {
    expect(s.mcp.getServerCapabilities()?.resources?.subscribe).toBe(true);
  });

  it("refuses to read or subscribe to another namespace's profile", async () => {
    await expect(s.mcp.readResource({ uri: "memctx://profile/bob" })).rejects.toThrow(
      /bound to namespace alice/,
    );
    await expect(s.mcp.subscribeResource({ uri: "memctx://profile/bob" })).rejects.toThrow(
      /bound to namespace alice/,
    );
  });

  it("says a refusal once, not 'MCP error -32602: MCP error -32602: ...'", async () => {
    const messageOf = (p: Promise<unknown>) =>
      p.then(
        () => "read",
        (err: Error) => err.message,
      );
    expect(await messageOf(s.mcp.readResource({ uri: "memctx://profile/bob" }))).toBe(
      "MCP error -32602: memctx://profile/bob is not readable in this session: it is bound to namespace alice, whose profile is memctx://profile/alice.",
    );
    // The SDK's own errors too.
    expect(await messageOf(s.mcp.readResource({ uri: "memctx://nothing" }))).toBe(
      "MCP error -32602: Resource memctx://nothing not found",
    );
    expect(await messageOf(s.mcp.subscribeResource({ uri: "memctx://profile/bob" }))).toMatch(
      /^MCP error -32602: memctx:\/\/profile\/bob is not readable/,
    );
  });

  it("reads the session's profile", async () => {
    const res = await s.mcp.readResource({ uri: "memctx://profile/alice" });
    const body = JSON.parse((res.contents[0] as { text: string }).text);
    expect(body.namespace).toBe("alice");
    expect(body.profile).toMatchObject({ static: expect.any(Array), dynamic: expect.any(Array) });
  });

  it("tells a subscriber when an add changes the profile, and again when its memories are ready", async () => {
    await s.mcp.subscribeResource({ uri: "memctx://profile/alice" });
    updates.length = 0;
    const added = structured(
      await call(s.mcp, "add_memory", { content: "Alice works at Acme as a chemist" }),
    );
    expect(added.memoriesReady).toBe(false);
    // One update right after the add, one once background dreaming finished.
    await vi.waitFor(() => expect(updates.length).toBeGreaterThanOrEqual(2), {
      timeout: 15_000,
      interval: 50,
    });
    expect(new Set(updates)).toEqual(new Set(["memctx://profile/alice"]));
    const doc = await t.client.ns("alice").documents.get(added.id as string);
    expect(doc.system.dreamingStatus).toBe("done");
    // The background work is also told as a log message.
    expect(logs).toContain(`memories of document ${added.id} are ready; the profile was updated`);
  });

  it("stops telling after unsubscribe", async () => {
    await s.mcp.unsubscribeResource({ uri: "memctx://profile/alice" });
    updates.length = 0;
    await call(s.mcp, "add_memory", { content: "Alice drinks green tea", wait: true });
    expect(updates).toEqual([]);
  });
});
