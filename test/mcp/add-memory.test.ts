import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../engine/ingest/pdf-fixture.js";
import { call, connect, startEngine, structured, type TestEngine, text } from "./helpers.js";

describe("add_memory", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(() => t.close());

  it("keeps one conversation as one document, one turn per line", async () => {
    const s = await connect({ client: t.client, namespace: "conv" });
    try {
      const first = structured(
        await call(s.mcp, "add_memory", { content: "I moved to Berlin", conversationId: "c1", role: "user" }),
      );
      const second = structured(
        await call(s.mcp, "add_memory", {
          content: "Nice!\nHow is it?",
          conversationId: "c1",
          role: "assistant",
        }),
      );
      const doc = await t.client.ns("conv").documents.get("conv-c1");
      expect(doc.content).toBe("user: I moved to Berlin\nassistant: Nice! How is it?");
      // The id add_memory answers is the one list shows.
      const { documents } = await t.client.ns("conv").documents.list();
      expect(documents.map((d) => [d.id, d.customId])).toEqual([[doc.id, "conv-c1"]]);
      expect(first.id).toBe(doc.id);
      expect(second).toMatchObject({ id: doc.id, conversationId: "c1", turns: 2 });
    } finally {
      await s.close();
    }
  });

  it("writes a turn's date on its line: what it says counts from that day, and the transcript's date stays", async () => {
    const s = await connect({ client: t.client, namespace: "dated" });
    try {
      for (const [date, content] of [
        ["2026-03-02", "I drive a 2015 Renault Clio."],
        ["2026-03-10", "I sold the Clio last week."],
      ])
        await call(s.mcp, "add_memory", { content, conversationId: "c3", role: "user", date, wait: true });
      const doc = await t.client.ns("dated").documents.get("conv-c3");
      expect(doc.content).toBe(
        "[2026-03-02] user: I drive a 2015 Renault Clio.\n[2026-03-10] user: I sold the Clio last week.",
      );
      const { memories } = await t.client.ns("dated").memories.list();
      // "last week" is the week before 10 March, the turn's day.
      expect(memories.map((m) => m.memory)).toContain(
        "The user sold the Clio last week (2-8 March 2026, the week before 10 March 2026).",
      );
    } finally {
      await s.close();
    }
  });

  it("appends to the stored transcript after the server restarts", async () => {
    const before = await connect({ client: t.client, namespace: "restart" });
    await call(before.mcp, "add_memory", { content: "first turn", conversationId: "c2", role: "user" });
    await before.close();
    const after = await connect({ client: t.client, namespace: "restart" });
    try {
      const res = structured(
        await call(after.mcp, "add_memory", { content: "second turn", conversationId: "c2", role: "user" }),
      );
      expect(res.turns).toBe(2);
      const doc = await t.client.ns("restart").documents.get("conv-c2");
      expect(doc.content).toBe("user: first turn\nuser: second turn");
    } finally {
      await after.close();
    }
  });

  it("keeps turns sent at the same time, none lost", async () => {
    const s = await connect({ client: t.client, namespace: "parallel" });
    try {
      await Promise.all(
        ["one", "two", "three", "four"].map((w) =>
          call(s.mcp, "add_memory", { content: w, conversationId: "c3", role: "user" }),
        ),
      );
      const doc = await t.client.ns("parallel").documents.get("conv-c3");
      expect(doc.content?.split("\n").sort()).toEqual([
        "user: four",
        "user: one",
        "user: three",
        "user: two",
      ]);
    } finally {
      await s.close();
    }
  });

  it("stores the same text once, however often it is added", async () => {
    const s = await connect({ client: t.client, namespace: "dedupe" });
    try {
      const a = structured(
        await call(s.mcp, "add_memory", { content: "Alice prefers tea", metadata: { topic: "drinks" } }),
      );
      const b = structured(
        await call(s.mcp, "add_memory", { content: "Alice prefers tea", metadata: { topic: "drinks" } }),
      );
      expect(a.id).toBe(b.id);
      const { documents } = await t.client.ns("dedupe").documents.list();
      expect(documents).toHaveLength(1);
      expect(documents[0]?.metadata).toEqual({ topic: "drinks" });
    } finally {
      await s.close();
    }
  });

  it("reports progress while it waits for the memories, then says they are ready", async () => {
    const s = await connect({ client: t.client, namespace: "progress" });
    try {
      const seen: Progress[] = [];
      const res = await s.mcp.callTool(
        { name: "add_memory", arguments: { content: "Bob's birthday is on 3 March", wait: true } },
        CallToolResultSchema,
        { onprogress: (p) => seen.push(p) },
      );
      expect(structured(res as CallToolResult)).toMatchObject({
        status: "done",
        dreamingStatus: "done",
        memoriesReady: true,
      });
      expect(seen.length).toBeGreaterThan(0);
      const values = seen.map((p) => p.progress);
      expect(values).toEqual([...values].sort((x, y) => x - y));
      expect(new Set(values).size).toBe(values.length);
      expect(seen.at(-1)).toMatchObject({ progress: 7, total: 7 });
      expect(seen.every((p) => typeof p.message === "string")).toBe(true);
    } finally {
      await s.close();
    }
  });

  it("asks for both conversationId and role, and changes nothing", async () => {
    const s = await connect({ client: t.client, namespace: "half" });
    try {
      const res = await call(s.mcp, "add_memory", { content: "hello", role: "user" });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/needs both/);
      const { documents } = await t.client.ns("half").documents.list();
      expect(documents).toHaveLength(0);
    } finally {
      await s.close();
    }
  });

  it("names the field when metadata breaks the rule", async () => {
    const s = await connect({ client: t.client, namespace: "badmeta" });
    try {
      const res = await call(s.mcp, "add_memory", { content: "x", metadata: { nested: { a: 1 } } });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/metadata/);
    } finally {
      await s.close();
    }
  });
});

describe("add_memory with a local file", () => {
  let t: TestEngine;
  let dir: string;
  beforeAll(async () => {
    t = await startEngine();
    dir = mkdtempSync(join(tmpdir(), "memctx-add-file-"));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("uploads the file at a path when the server may read local files, once per content", async () => {
    const path = join(dir, "handbook.pdf");
    writeFileSync(path, makePdf([["Deploys happen on Tuesdays after the standup."]], "Team handbook"));
    const s = await connect({ client: t.client, namespace: "files", localFiles: true });
    try {
      const res = await call(s.mcp, "add_memory", { file: path, wait: true });
      const out = structured<{ id: string; status: string; memoriesReady: boolean }>(res);
      expect(out).toMatchObject({ status: "done", memoriesReady: true });
      expect(text(res)).toContain("File handbook.pdf stored as document");
      const doc = await t.client.ns("files").documents.get(out.id);
      expect(doc).toMatchObject({ type: "pdf", title: "handbook.pdf" });
      expect(doc.content).toContain("Deploys happen on Tuesdays");
      const again = structured<{ id: string }>(await call(s.mcp, "add_memory", { file: path }));
      expect(again.id).toBe(out.id);
      expect((await t.client.ns("files").documents.list()).documents).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it("says what is wrong with a path, and takes content or file, not both", async () => {
    const s = await connect({ client: t.client, namespace: "files-bad", localFiles: true });
    try {
      const missing = await call(s.mcp, "add_memory", { file: join(dir, "nope.txt") });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toMatch(/cannot read .*nope\.txt \(ENOENT\)/);
      const folder = await call(s.mcp, "add_memory", { file: dir });
      expect(text(folder)).toMatch(/is not a regular file/);
      const both = await call(s.mcp, "add_memory", { content: "x", file: join(dir, "handbook.pdf") });
      expect(text(both)).toMatch(/either content .* or file/);
      const neither = await call(s.mcp, "add_memory", {});
      expect(neither.isError).toBe(true);
      expect((await t.client.ns("files-bad").documents.list()).documents).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("refuses a path on a server that may not read local files (the default, as over HTTP)", async () => {
    const path = join(dir, "note.md");
    writeFileSync(path, "# A note\n");
    const s = await connect({ client: t.client, namespace: "files-remote" });
    try {
      const res = await call(s.mcp, "add_memory", { file: path });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/running on your machine \(stdio\)/);
      expect((await t.client.ns("files-remote").documents.list()).documents).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
