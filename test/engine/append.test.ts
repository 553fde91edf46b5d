import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "../../src/client/index.js";
import { ROOT, serverPerFile } from "../support/harness.js";

const NODE = join(ROOT, "node_modules/.bin/node");

/** A separate process on the same data directory appending `turns` turns, one call each. */
function appender(dataDir: string, who: string, turns: number): Promise<void> {
  const code = `
    const { openEngine } = await import("./src/engine/index.ts");
    const { MemoryClient } = await import("./src/client/index.ts");
    const engine = await openEngine({ dataDir: ${JSON.stringify(dataDir)}, apiKey: "mk_test_append_0123456789", workers: 0, log: () => {} });
    const ns = new MemoryClient({ apiKey: "mk_test_append_0123456789", fetch: engine.fetch }).ns("chat");
    for (let i = 0; i < ${turns}; i++) {
      await ns.documents.add({ id: "conv-race", content: "${who}: turn " + i, append: true });
    }
    await engine.close();
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: ROOT });
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (status) =>
      status === 0 ? resolve() : reject(new Error(`${who} exited ${status}: ${err}`)),
    );
  });
}

describe("appending conversation turns to a document", () => {
  const { server, client, dir } = serverPerFile({ workers: 0, prefix: "memctx-append-" });

  it("starts the document with the first turn and adds each later one on a new line", async () => {
    const ns = client.ns("talk");
    const first = await ns.documents.add({ id: "conv-1", content: "user: hello", append: true });
    expect(first.lines).toBe(1);
    const second = await ns.documents.add({ id: "conv-1", content: "assistant: hi there\n", append: true });
    expect(second).toMatchObject({ id: first.id, lines: 2, status: "queued" });
    expect((await ns.documents.get("conv-1")).content).toBe("user: hello\nassistant: hi there");
  });

  it("refuses append without an id, naming the field, and stores nothing", async () => {
    const ns = client.ns("refused");
    await expect(ns.documents.add({ content: "user: lost", append: true })).rejects.toThrow(
      InvalidRequestError,
    );
    const raw = await server.call("POST", "/ns/refused/document", {
      body: { content: "user: lost", append: true },
    });
    expect(raw.status).toBe(400);
    expect(JSON.stringify(await raw.json())).toContain("append needs the id");
    await expect(client.ns("refused").documents.list()).resolves.toMatchObject({ documents: [] });
  });

  it("keeps every turn when two processes append to one conversation at once", async () => {
    await Promise.all([appender(dir, "ana", 40), appender(dir, "bob", 40)]);
    const doc = await client.ns("chat").documents.get("conv-race");
    const lines = (doc.content ?? "").split("\n");
    expect(lines).toHaveLength(80);
    for (const who of ["ana", "bob"]) {
      // Each process's turns all there, and in the order it sent them.
      const mine = lines.filter((l) => l.startsWith(`${who}:`));
      expect(mine).toEqual(Array.from({ length: 40 }, (_, i) => `${who}: turn ${i}`));
    }
  });
});
