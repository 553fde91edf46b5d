/**
 * Security review: what one organization stores must not change what another's searches answer.
 * BM25's term statistics (idf, average length) are each namespace's own (store/search-index.ts):
 * another tenant's content must not move this tenant's similarities, or a tenant could learn
 * whether a word occurs in others' data.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { noDreaming } from "../../src/engine/pipeline/dreamer.js";
import { TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
afterEach(async () => {
  await engine?.close();
  dir?.remove();
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await engine.fetch(
    new Request(`http://memctx.local${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  // biome-ignore lint/suspicious/noExplicitAny: read field by field
  return (await res.json()) as any;
}

async function indexed(key: string, namespace: string, count: number): Promise<void> {
  await until(
    async () => {
      const list = await call("POST", `/ns/${namespace}/list/documents?limit=100`, key, {});
      // biome-ignore lint/suspicious/noExplicitAny: read field by field
      return list.documents.filter((d: any) => d.system.status === "done").length as number;
    },
    (done) => done >= count,
    `${count} documents of ${namespace} indexed`,
  );
}

/** A lexical-only engine (no vectors, no memories) on a fresh data directory. */
async function openLexicalEngine(): Promise<void> {
  dir = tempDir("memctx-review-");
  engine = await openEngine({
    dataDir: dir.path,
    apiKey: TEST_KEY,
    workers: 1,
    embedder: null,
    dreamer: noDreaming,
    log: () => {},
  });
}

describe("search across organizations", () => {
  it("answers the same similarity whatever another organization stores", async () => {
    await openLexicalEngine();
    const docs = [
      "The quokka project ships in May with the new billing pipeline.",
      "Lunch on Friday is at the Italian place near the station.",
      "The billing pipeline needs a review of its retry logic.",
    ];
    for (const content of docs) await call("POST", "/ns/victim/document", TEST_KEY, { content });
    await indexed(TEST_KEY, "victim", docs.length);
    const search = async () =>
      (
        await call("POST", "/ns/victim/search", TEST_KEY, {
          query: "quokka",
          searchMode: "chunks",
          threshold: 0,
        })
      ).results[0]?.similarity as number | undefined;
    const before = await search();
    expect(before).toBeGreaterThan(0);

    // Another organization's content, never visible to the first.
    const other = await engine.createKey("other-org");
    for (let i = 0; i < 40; i++) {
      await call("POST", "/ns/probe/document", other, { content: `quokka note number ${i}` });
    }
    await indexed(other, "probe", 40);

    expect(await search()).toBe(before);
  });

  it("answers the same similarity whatever another namespace of the organization stores", async () => {
    await openLexicalEngine();
    const docs = ["The quokka project ships in May.", "The billing pipeline needs a review."];
    for (const content of docs) await call("POST", "/ns/team-a/document", TEST_KEY, { content });
    await indexed(TEST_KEY, "team-a", docs.length);
    const search = async () =>
      (
        (await call("POST", "/ns/team-a/search", TEST_KEY, {
          query: "quokka billing review",
          searchMode: "chunks",
          threshold: 0,
        })) as { results: { id: string; similarity: number }[] }
      ).results.map((r) => [r.id, r.similarity]);
    const before = await search();
    expect(before.length).toBe(2);

    for (let i = 0; i < 30; i++) {
      await call("POST", "/ns/team-b/document", TEST_KEY, {
        content: `quokka review ${i} of the billing pipeline`,
      });
    }
    await indexed(TEST_KEY, "team-b", 30);
    expect(await search()).toEqual(before);
  });
});
