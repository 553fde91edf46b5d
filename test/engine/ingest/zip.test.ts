import { describe, expect, it } from "vitest";
import { isDocxXml, resolveFile } from "../../../src/engine/ingest/file.js";
import { ArchiveLimitError, openZip } from "../../../src/engine/ingest/zip.js";
import { makeDocx, makeDocxBomb, makeZip } from "./file-fixtures.js";

const MB = 1024 * 1024;
/** The archive with the first bytes of `name`'s compressed data overwritten: inflating it fails. */
function spoilt(zip: Uint8Array, name: string): Uint8Array {
  const out = Buffer.from(zip);
  const header = out.indexOf(Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04])]));
  for (let at = header; at >= 0; at = out.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]), at + 4)) {
    const nameLength = out.readUInt16LE(at + 26);
    const extraLength = out.readUInt16LE(at + 28);
    if (out.toString("utf8", at + 30, at + 30 + nameLength) !== name) continue;
    out.fill(0xff, at + 30 + nameLength + extraLength, at + 30 + nameLength + extraLength + 64);
    return new Uint8Array(out);
  }
  throw new Error(`no entry ${name}`);
}

const docx = (bytes: Uint8Array) => ({ bytes, name: "b.docx", mimeType: "x", kind: "docx" as const });

describe("a Word document's archive, inflated within limits", () => {
  it("refuses a zip bomb by its directory's sizes before inflating anything, naming the limit and its variable", async () => {
    const bomb = makeDocxBomb(150 * MB);
    expect(bomb.length).toBeLessThan(1 * MB);
    await expect(resolveFile(docx(bomb))).rejects.toThrow(
      /word\/document\.xml inflates to more than 8388608 bytes, the limit per archive entry \(MEMCTX_MAX_INFLATED_ENTRY_BYTES\)/,
    );
    // Nothing was inflated: with its compressed bytes spoilt, the answer is still the directory's.
    await expect(resolveFile(docx(spoilt(bomb, "word/document.xml")))).rejects.toThrow(
      /inflates to more than 8388608 bytes, the limit per archive entry/,
    );
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
