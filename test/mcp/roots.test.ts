import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { namespaceFromRoot, namespaceFromRoots } from "../../src/mcp/roots.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { call, startEngine, structured, type TestEngine } from "./helpers.js";

async function sessionWithRoots(t: TestEngine, roots: { uri: string }[] | undefined) {
  let source: () => Promise<string> = async () => "unbound";
  const server = createMcpServer({ client: t.client, namespace: () => source() });
  source = namespaceFromRoots(server.server);
  const [c, s] = InMemoryTransport.createLinkedPair();
  await server.connect(s);
  const mcp = new Client({ name: "roots-test", version: "1" }, { capabilities: roots ? { roots: {} } : {} });
  if (roots) mcp.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
  await mcp.connect(c);
  const close = async () => {
    await mcp.close();
    await server.close();
  };
  return { mcp, close };
}

describe("the namespace of a stdio session without --namespace", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(() => t.close());

  it("is the first root's folder name, slugged, with a short hash of its path", () => {
    const ns = namespaceFromRoot("file:///home/ana/code/My%20Repo/");
    expect(ns).toMatch(/^my-repo-[0-9a-f]{6}$/);
    expect(namespaceFromRoot("file:///home/ana/code/My%20Repo")).toBe(ns);
    expect(namespaceFromRoot("file:///home/bob/My%20Repo")).not.toBe(ns);
    expect(namespaceFromRoot("file:///")).toMatch(/^root-[0-9a-f]{6}$/);
  });

  it("comes from the client's roots, and the session's content lands there", async () => {
    const s = await sessionWithRoots(t, [
      { uri: "file:///work/projects/atlas" },
      { uri: "file:///tmp/other" },
    ]);
    try {
      const expected = namespaceFromRoot("file:///work/projects/atlas")!;
      const { resources } = await s.mcp.listResources();
      expect(resources[0]?.uri).toBe(`memctx://profile/${expected}`);
      const added = structured(await call(s.mcp, "add_memory", { content: "Atlas ships in May" }));
      const doc = await t.client.ns(expected).documents.get(added.id as string);
      expect(doc.content).toBe("Atlas ships in May");
    } finally {
      await s.close();
    }
  });

  it("is 'default' when the client has no roots", async () => {
    const s = await sessionWithRoots(t, undefined);
    try {
      const { resources } = await s.mcp.listResources();
      expect(resources[0]?.uri).toBe("memctx://profile/default");
    } finally {
      await s.close();
    }
  });
});
