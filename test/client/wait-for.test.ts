import { describe, expect, it } from "vitest";
import {
  APIUserAbortError,
  DocumentFailedError,
  type DocumentState,
  WaitTimeoutError,
} from "../../src/client/index.js";
import { documentBody, scriptedServerPerFile } from "../support/scripted-server.js";
import { until } from "../support/wait.js";

// Default maxRetries (2); a tiny backoff base keeps the tests fast.
const { server, client } = scriptedServerPerFile({ retryBaseMs: 1 });

const states = (...s: [string, string][]) =>
  s.map(([status, dreaming]) => ({ json: documentBody("d1", status, dreaming) }));

describe("waitFor", () => {
  it("polls until indexed and reports each new state once, in order", async () => {
    server.reply(
      ...states(
        ["queued", "dreaming"],
        ["queued", "dreaming"],
        ["extracting", "dreaming"],
        ["embedding", "dreaming"],
        ["done", "dreaming"],
        ["done", "done"],
      ),
    );
    const seen: DocumentState[] = [];
    const doc = await client.ns("alice").documents.waitFor("d1", {
      until: "indexed",
      pollIntervalMs: 1,
      onProgress: (s) => seen.push(s),
    });
    expect(doc.system.status).toBe("done");
    expect(doc.system.dreamingStatus).toBe("dreaming");
    expect(seen).toEqual([
      { status: "queued", dreamingStatus: "dreaming" },
      { status: "extracting", dreamingStatus: "dreaming" },
      { status: "embedding", dreamingStatus: "dreaming" },
      { status: "done", dreamingStatus: "dreaming" },
    ]);
    expect(server.received).toHaveLength(5);
    expect(server.received.every((r) => r.method === "GET" && r.target === "/ns/alice/document/d1")).toBe(
      true,
    );
  });

  it("waits for memories until status and dreamingStatus are both done", async () => {
    server.reply(
      ...states(["queued", "dreaming"], ["done", "dreaming"], ["done", "dreaming"], ["done", "done"]),
    );
    const seen: DocumentState[] = [];
    const doc = await client.waitForDocument("alice", "d1", {
      until: "memories",
      pollIntervalMs: 1,
      onProgress: (s) => seen.push(s),
    });
    expect(doc.system.dreamingStatus).toBe("done");
    expect(seen.map((s) => `${s.status}/${s.dreamingStatus}`)).toEqual([
      "queued/dreaming",
      "done/dreaming",
      "done/done",
    ]);
    expect(server.received).toHaveLength(4);
  });

  it("throws DocumentFailedError carrying the failed document and its error", async () => {
    server.reply(...states(["queued", "dreaming"]), {
      json: documentBody("d1", "failed", "done", { error: "could not fetch the URL" }),
    });
    const err = await client
      .ns("alice")
      .documents.waitFor("d1", { pollIntervalMs: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentFailedError);
    expect((err as DocumentFailedError).message).toMatch(/could not fetch the URL/);
    expect((err as DocumentFailedError).document.error).toBe("could not fetch the URL");
  });

  it("gives up with WaitTimeoutError naming the last state at its timeout", async () => {
    server.fallback = { json: documentBody("d1", "queued", "dreaming") };
    const err = await client
      .ns("alice")
      .documents.waitFor("d1", { timeoutMs: 200, pollIntervalMs: 10 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as WaitTimeoutError).message).toMatch(/d1 was not indexed within 200 ms.*status queued/);
    expect((err as WaitTimeoutError).lastState).toEqual({ status: "queued", dreamingStatus: "dreaming" });
  });

  it("times out even when a poll itself hangs", async () => {
    server.fallback = "hang";
    const err = await client
      .ns("alice")
      .documents.waitFor("d1", { timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
  });

  it("stops with APIUserAbortError when the caller aborts", async () => {
    server.fallback = { json: documentBody("d1", "queued", "dreaming") };
    const ac = new AbortController();
    const p = client.ns("alice").documents.waitFor("d1", { signal: ac.signal, pollIntervalMs: 5 });
    await until(
      () => server.received.length,
      (n) => n >= 2,
      "two polls",
    );
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(APIUserAbortError);
  });
});
