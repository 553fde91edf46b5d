/**
 * Bounded work per document: a real `memctx serve` is sent Word documents that inflate far past
 * what they weigh (zip bombs, one whose directory lies) and one whose conversion needs more memory
 * than its cap. Each fails its own document, naming the limit and its variable; the server stays
 * up and the next small document is done. (How fast: bench/zip-bomb.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentFailedError, MemoryClient } from "../../src/client/index.js";
import { makeDocxBomb } from "../engine/ingest/file-fixtures.js";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { WAIT_MS } from "../support/wait.js";

const MB = 1024 * 1024;
const dir = tempDir("memctx-bombs-");
let serve: ServeChild;
let client: MemoryClient;
beforeAll(async () => {
  // The inflation limits raised past a 24 MB bomb, the memory cap lowered: the cap is what stops
  // it. (The cap stops a heap that grows; one allocation past it, a 150 MB string, would take the
  // process down with it: the inflation limits keep every allocation small.)
  serve = await spawnServe(dir.path, {
    MEMCTX_MAX_INFLATED_ENTRY_BYTES: String(32 * MB),
    MEMCTX_MAX_INFLATED_BYTES: String(32 * MB),
    MEMCTX_FILE_MEMORY_MB: "64",
  });
  client = new MemoryClient({ baseUrl: serve.url, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await client.close();
  await stopChild(serve);
  dir.remove();
});

/** The error a document failed with (waitFor throws on `failed`). */
async function failure(ns: string, id: string): Promise<string> {
  const err = await client
    .ns(ns)
    .documents.waitFor(id, { timeoutMs: WAIT_MS })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(DocumentFailedError);
  return (err as DocumentFailedError).document.error ?? "";
}

/** The next small document after a bomb is done: the bomb held no processing loop. */
async function expectNextSmallDocumentDone(ns: string) {
  const small = await client.ns(ns).documents.add({ content: "Ines moved to Porto in May." });
  const doc = await client.ns(ns).documents.waitFor(small.id, { timeoutMs: WAIT_MS });
  expect(doc.system.status).toBe("done");
}

describe("a Word document that inflates past its limits", () => {
  it("fails a zip bomb whose conversion needs more than the memory cap, naming MEMCTX_FILE_MEMORY_MB; the next document flows", async () => {
    const bomb = await client
      .ns("bombs")
      .documents.addFile({ file: makeDocxBomb(24 * MB), filename: "b.docx" });
    expect(await failure("bombs", bomb.id)).toMatch(
      /needed more than 64 MB of memory, the limit per file \(MEMCTX_FILE_MEMORY_MB\)/,
    );
    await expectNextSmallDocumentDone("bombs");
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
  });

  it("fails a bomb whose directory declares 1 KB at the declared size, naming the limits", async () => {
    const bomb = await client
      .ns("liars")
      .documents.addFile({ file: makeDocxBomb(150 * MB, { lie: true }), filename: "l.docx" });
    expect(await failure("liars", bomb.id)).toMatch(
      /inflates to more than the 1024 bytes its directory entry declares/,
    );
    await expectNextSmallDocumentDone("liars");
  });
});
