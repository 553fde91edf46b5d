import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { connect, type Session, startEngine } from "./helpers.js";

/**
 * What the six tools with their output schemas may take, compact JSON: the target. They
 * stand at 13.4 KB (28.3 KB before the lean schemas; 12.4 KB before issue 14 gave add_memory a file path, forget documentIds, list one memory, connect_source its actions), so new fields have room but not unbounded.
 */
const TOOLS_LIST_MAX_BYTES = 14_000;

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

  it(`stays within ${TOOLS_LIST_MAX_BYTES} bytes of compact JSON, output schemas included`, async () => {
    const { tools } = await s.mcp.listTools();
    for (const t of tools) expect(t.outputSchema, t.name).toBeDefined();
    expect(JSON.stringify(tools).length).toBeLessThanOrEqual(TOOLS_LIST_MAX_BYTES);
  });

  it("writes the filter's leaf once per tool and no JSON Schema that says nothing", async () => {
    const { tools } = await s.mcp.listTools();
    const search = JSON.stringify(tools.find((t) => t.name === "search")?.inputSchema);
    expect(search.match(/"arrayNotContains"/g)).toHaveLength(1);
    const all = JSON.stringify(tools);
    expect(all).not.toContain("9007199254740991");
    expect(all).not.toContain('"$schema"');
    for (const t of tools)
      expect(JSON.stringify(t.outputSchema), t.name).not.toMatch(/"required"|"additionalProperties":false/);
  });

  it("gives results that the SDK client validates against the lean output schemas", async () => {
    const t = await startEngine();
    const session = await connect({ client: t.client });
    try {
      // Listing first: the SDK client then checks every structured result against its output schema.
      await session.mcp.listTools();
      const added = await session.mcp.callTool({
        name: "add_memory",
        arguments: { content: "Ana prefers green tea", metadata: { topic: "drinks" }, wait: true },
      });
      expect(added.isError, JSON.stringify(added.content)).toBeFalsy();
      for (const [name, args] of [
        ["search", { query: "tea", filter: { field: "topic", operator: "eq", value: "drinks" } }],
        ["list", { type: "documents" }],
        ["list", { type: "memories" }],
        ["list", { type: "chunks" }],
        ["get_profile", {}],
        ["forget", { query: "coffee" }],
      ] as const) {
        const res = await session.mcp.callTool({ name, arguments: args });
        expect(res.isError, `${name}: ${JSON.stringify(res.content)}`).toBeFalsy();
        expect(res.structuredContent, name).toBeDefined();
      }
    } finally {
      await session.close();
      await t.close();
    }
  });
});
