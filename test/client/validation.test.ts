import { describe, expect, it } from "vitest";
import { InvalidRequestError, MemoryApiError } from "../../src/client/index.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

// Default maxRetries (2); a tiny backoff base keeps the tests fast.
const { server, client } = scriptedServerPerFile({ retryBaseMs: 1 });

/** Runs `call`, expects InvalidRequestError matching `message`, and that the server saw nothing. */
async function rejectsBeforeSending(call: () => Promise<unknown>, message: RegExp): Promise<void> {
  let err: unknown;
  try {
    await call();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidRequestError);
  expect(err).toBeInstanceOf(MemoryApiError);
  expect((err as Error).message).toMatch(message);
  expect(server.received).toHaveLength(0);
}

describe("bad input is refused before anything is sent", () => {
  it("refuses an invalid namespace when the namespace client is made", () => {
    expect(() => client.ns("not ok!")).toThrow(InvalidRequestError);
    expect(() => client.ns("not ok!")).toThrow(/^namespace: must match \^\[a-zA-Z0-9_:-\]\+\$/);
    expect(() => client.ns("x".repeat(101))).toThrow(/namespace: must be at most 100 characters/);
    expect(() => client.ns("")).toThrow(/namespace:/);
    expect(server.received).toHaveLength(0);
  });

  it("refuses an invalid namespace passed to the generic request", async () => {
    await rejectsBeforeSending(
      () => client.request("getNamespace", { params: { namespace: "a/b" } }),
      /path\.namespace: must match/,
    );
  });

  it("refuses more than 100 document ids and an empty list", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `d${i}`);
    await rejectsBeforeSending(
      () => client.ns("alice").documents.delete(ids),
      /^ids: ids takes at most 100 ids$/,
    );
    await rejectsBeforeSending(() => client.ns("alice").documents.delete([]), /ids: ids needs at least 1 id/);
  });

  it("refuses more than 500 memory ids to forget", async () => {
    const ids = Array.from({ length: 501 }, (_, i) => `m${i}`);
    await rejectsBeforeSending(
      () => client.ns("alice").memories.forget(ids),
      /ids: ids takes at most 500 ids/,
    );
  });

  it("refuses a list limit out of range, naming the query field", async () => {
    await rejectsBeforeSending(
      () => client.ns("alice").documents.list({ limit: 101 }),
      /query\.limit: limit must be at most 100/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").memories.list({ limit: 0 }),
      /query\.limit: limit must be at least 1/,
    );
  });

  it("refuses a malformed filter", async () => {
    await rejectsBeforeSending(
      () =>
        client.ns("alice").search({
          query: "tea",
          filter: { field: "bad field!", operator: "eq", value: "x" },
        }),
      /filter\.field: field must match/,
    );
    await rejectsBeforeSending(
      // A range operator takes a number.
      () =>
        client
          .ns("alice")
          .documents.list({}, { filter: { field: "n", operator: "gt", value: "3" as unknown as number } }),
      /filter/,
    );
  });

  it("refuses search options out of range", async () => {
    await rejectsBeforeSending(
      () => client.ns("alice").search({ query: "tea", limit: 101 }),
      /limit: limit must be at most 100/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").search({ query: "tea", threshold: 1.5 }),
      /threshold: threshold must be between 0 and 1/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").search({ query: "  " }),
      /query: query must not be empty/,
    );
  });

  it("refuses an add with empty content, a bad date or too long a supportingContext", async () => {
    await rejectsBeforeSending(
      () => client.ns("alice").documents.add({ content: "" }),
      /content: must not be empty/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").documents.add({ content: "x", date: "yesterday" }),
      /date:/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").documents.add({ content: "x", supportingContext: "x".repeat(1501) }),
      /supportingContext: must be at most 1500 characters/,
    );
    await rejectsBeforeSending(
      () => client.ns("alice").documents.add({ content: "x", dreaming: "later" as "instant" }),
      /query\.dreaming/,
    );
  });

  it("refuses unknown options and bad bucket names", async () => {
    await rejectsBeforeSending(
      () => client.ns("alice").documents.get("d1", { include: ["everything" as "chunks"] }),
      /query\.include/,
    );
    await rejectsBeforeSending(() => client.ns("alice").profile.buckets.put({ "Bad Name": "x" }), /buckets/);
    await rejectsBeforeSending(() => client.ns("alice").profile.buckets.delete(["a", "a"]), /unique/);
  });

  it("refuses a batch of more than 600 documents", async () => {
    const documents = Array.from({ length: 601 }, (_, i) => `doc ${i}`);
    await rejectsBeforeSending(() => client.batch.add({ documents }), /documents/);
  });

  it("refuses an empty document id in a path", async () => {
    await rejectsBeforeSending(() => client.ns("alice").documents.get(""), /path\.id: must not be empty/);
  });
});
