import { beforeAll, describe, expect, it } from "vitest";
import type { NamespaceClient } from "../../../src/client/index.js";
import { rewriteQuery } from "../../../src/engine/search/rewrite.js";
import { serverPerFile } from "../../support/harness.js";

describe("rewriteQuery (the words of the rewrite)", () => {
  it("drops the words that ask the memory and keeps what is asked about", () => {
    expect(rewriteQuery("Hey, can you remember what I told you about Anna's wedding?")).toBe(
      "can you what I you about Anna's wedding?",
    );
    expect(rewriteQuery("Do you know anything about the Lisbon trip? Thanks!")).toBe(
      "Do you about the Lisbon trip?",
    );
    // Contractions and typographic quotes are normalized before the words are read.
    expect(rewriteQuery("What\u2019s the name of the dog I mentioned?")).toBe(
      "What is the name of the dog I",
    );
  });

  it("keeps the query when nothing else would be left", () => {
    expect(rewriteQuery("Remember?")).toBe("Remember?");
    expect(rewriteQuery("  tell me  ")).toBe("me");
  });
});

describe("search with rewriteQuery: true, over HTTP", () => {
  const { client } = serverPerFile({ workers: 1 });
  let ns: NamespaceClient;

  beforeAll(async () => {
    ns = client.ns("rewrite");
    const docs = [
      "I told Sam I remember the old harbour well; he said he remembers it too.",
      "Do you remember what Priya told us? I told her I would remember to call.",
      "She said she told everyone and they all remember it.",
      "Anna's wedding is planned for June, in a vineyard near Porto.",
    ];
    for (const [i, content] of docs.entries()) {
      await ns.documents.add({ content, id: `d${i}`, taskType: "superrag" });
    }
    for (let i = 0; i < docs.length; i++) await ns.documents.waitFor(`d${i}`, { until: "indexed" });
  });

  const query = "Can you remember what I told you about the wedding?";
  const top = async (rewrite: boolean | undefined) => {
    const res = await ns.search({
      query,
      searchMode: "chunks",
      threshold: 0,
      limit: 4,
      ...(rewrite === undefined ? {} : { rewriteQuery: rewrite }),
    });
    return res.results.map((r) => r.documentId);
  };

  it("finds what the question is about first, where the request words rank talk of remembering above it", async () => {
    const [plain, off, rewritten] = await Promise.all([top(undefined), top(false), top(true)]);
    const wedding = (await ns.documents.get("d3")).id;
    // Without the rewrite, "remember" and "told" outweigh "wedding".
    expect(plain[0]).not.toBe(wedding);
    expect(off).toEqual(plain);
    // With it, the wedding comes first and the talk of remembering does not come at all.
    expect(rewritten).toEqual([wedding]);
  });
});
