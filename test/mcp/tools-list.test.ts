import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { connect, type Session } from "./helpers.js";

// No engine needed: listing tools never calls the API.
describe("the tool list", () => {
  let s: Session;
  beforeAll(async () => {
    const client = new MemoryClient({
      apiKey: "unused",
      fetch: async () => new Response(null, { status: 500 }),
    });
    s = await connect({ client });
  });
  afterAll(() => s.close());

  it("matches the reviewed snapshot (names, titles, descriptions, schemas, annotations)", async () => {
    const { tools } = await s.mcp.listTools();
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot("./__snapshots__/tools.json");
  });

  it("offers the six tools, none of which takes a namespace", async () => {
    const { tools } = await s.mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "add_memory",
      "search",
      "get_profile",
      "forget",
      "list",
      "connect_source",
    ]);
    for (const t of tools) {
      expect(Object.keys(t.inputSchema.properties ?? {})).not.toContain("namespace");
      expect(t.outputSchema, t.name).toBeDefined();
      expect(t.title, t.name).toBeTruthy();
    }
  });

  it("marks forget destructive and the reading tools read-only", async () => {
    const { tools } = await s.mcp.listTools();
    const by = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(by.forget?.destructiveHint).toBe(true);
    for (const name of ["search", "get_profile", "list"]) expect(by[name]?.readOnlyHint, name).toBe(true);
    for (const name of ["add_memory", "forget", "connect_source"])
      expect(by[name]?.readOnlyHint, name).toBe(false);
  });

  it("offers only the reading tools in read-only mode", async () => {
    const client = new MemoryClient({
      apiKey: "unused",
      fetch: async () => new Response(null, { status: 500 }),
    });
    const ro = await connect({ client, readOnly: true });
    try {
      const { tools } = await ro.mcp.listTools();
      expect(tools.map((t) => t.name)).toEqual(["search", "get_profile", "list"]);
    } finally {
      await ro.close();
    }
  });
});
