import { afterEach, describe, expect, it } from "vitest";
import { extractFile } from "../../src/engine/pipeline/extraction.js";
import { makeDocx, makeDocxBomb } from "./ingest/file-fixtures.js";

const MB = 1024 * 1024;
const docx = (bytes: Uint8Array) => ({ bytes, name: "b.docx", mimeType: "x", kind: "docx" as const });
const VARIABLES = [
  "MEMCTX_FILE_TIMEOUT_MS",
  "MEMCTX_FILE_MEMORY_MB",
  "MEMCTX_MAX_INFLATED_ENTRY_BYTES",
  "MEMCTX_MAX_INFLATED_BYTES",
];
afterEach(() => {
  for (const name of VARIABLES) delete process.env[name];
});

/** Each file is converted in a thread of its own, with a deadline and a memory cap, read when it starts. */
describe("converting a file in a thread of its own", () => {
  it("gives the text back, as reading it in place would", async () => {
    const out = await extractFile(
      docx(makeDocx(["Minutes", "The board met."])),
      new AbortController().signal,
    );
    expect(out).toMatchObject({ text: "Minutes\n\nThe board met.", title: "Minutes", type: "docx" });
  });

  it("stops a conversion past its deadline, naming MEMCTX_FILE_TIMEOUT_MS", async () => {
    // 4 MB of paragraphs: mammoth takes seconds over them.
    process.env.MEMCTX_FILE_TIMEOUT_MS = "300";
    await expect(extractFile(docx(makeDocxBomb(4 * MB)), new AbortController().signal)).rejects.toThrow(
      /converting the docx file took longer than 300 ms, the limit per file \(MEMCTX_FILE_TIMEOUT_MS\)/,
    );
  });

  it("stops a conversion past its memory cap, naming MEMCTX_FILE_MEMORY_MB, and this thread goes on", async () => {
    process.env.MEMCTX_FILE_MEMORY_MB = "32";
    process.env.MEMCTX_MAX_INFLATED_ENTRY_BYTES = String(16 * MB);
    process.env.MEMCTX_MAX_INFLATED_BYTES = String(16 * MB);
    await expect(extractFile(docx(makeDocxBomb(12 * MB)), new AbortController().signal)).rejects.toThrow(
      /needed more than 32 MB of memory, the limit per file \(MEMCTX_FILE_MEMORY_MB\)/,
    );
    const after = await extractFile(docx(makeDocx(["still here"])), new AbortController().signal);
    expect(after.text).toBe("still here");
  });

  it("stops when its job is stopped", async () => {
    const stop = new AbortController();
    const pending = extractFile(docx(makeDocxBomb(4 * MB)), stop.signal);
    stop.abort(new Error("shutting down"));
    await expect(pending).rejects.toThrow("shutting down");
  });
});
