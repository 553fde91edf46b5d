import { describe, expect, it } from "vitest";
import { isDocxXml, resolveFile } from "../../../src/engine/ingest/file.js";
import { ArchiveLimitError, openZip } from "../../../src/engine/ingest/zip.js";
import { makeDocx, makeDocxBomb, makeZip } from "./file-fixtures.js";

const MB = 1024 * 1024;
const docx = (bytes: Uint8Array) => ({ bytes, name: "b.docx", mimeType: "x", kind: "docx" as const });

describe("a Word document's archive, inflated within limits", () => {
  it("refuses a zip bomb by its directory's sizes before inflating anything, naming the limit and its variable", async () => {
    const bomb = makeDocxBomb(150 * MB);
    expect(bomb.length).toBeLessThan(1 * MB);
    const started = performance.now();
    await expect(resolveFile(docx(bomb))).rejects.toThrow(
      /word\/document\.xml inflates to more than 8388608 bytes, the limit per archive entry \(MEMCTX_MAX_INFLATED_ENTRY_BYTES\)/,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("stops a bomb whose directory lies about its size at the declared size, not at the end of its output", async () => {
    const lying = makeDocxBomb(150 * MB, { lie: true });
    await expect(resolveFile(docx(lying))).rejects.toThrow(
      /word\/document\.xml inflates to more than the 1024 bytes its directory entry declares/,
    );
    await expect(openZip(lying).read("word/document.xml")).rejects.toThrow(ArchiveLimitError);
  });

  it("counts every entry read against the total, and the declared sizes of the parts that are read", async () => {
    const limits = { total: 2500, entry: 2000 };
    const parts = { "a.xml": "x".repeat(1500), "b.xml": "y".repeat(1500) };
    expect(() => openZip(makeZip(parts, { deflate: true }), limits)).toThrow(
      /the archive inflates to more than 2500 bytes, the limit per document \(MEMCTX_MAX_INFLATED_BYTES\)/,
    );
    // A picture is not read for text: its size is not counted, and the text parts still are.
    const withPicture = makeZip({ "a.xml": "x".repeat(100), "media/p.png": Buffer.alloc(5000) });
    const zip = openZip(withPicture, limits, isDocxXml);
    expect(zip.exists("media/p.png")).toBe(true);
    await expect(zip.read("media/p.png")).rejects.toThrow(/media\/p\.png inflates to more than 2000 bytes/);
  });

  it("reads an ordinary Word document, deflated or stored, and a large one under the limits", async () => {
    expect((await resolveFile(docx(makeDocx(["Hello", "world"])))).text).toBe("Hello\n\nworld");
    const big = await resolveFile(docx(makeDocxBomb(2 * MB)));
    expect(big.text.length).toBeGreaterThan(500_000);
  });

  it("names a damaged or mislabelled archive as unreadable", async () => {
    await expect(resolveFile(docx(new Uint8Array([0x50, 0x4b, 3, 4, 0, 0])))).rejects.toThrow(
      /not a readable Word document: not a ZIP archive/,
    );
  });
});
