import { describe, expect, it } from "vitest";
import { detectFile, resolveFile, UnsupportedFileError } from "../../../src/engine/ingest/file.js";
import { makeDocx, makePng, makeWav, makeZip } from "./file-fixtures.js";
import { makePdf } from "./pdf-fixture.js";

const bytes = (...b: number[]) => new Uint8Array(b);
const text = (s: string) => new TextEncoder().encode(s);

describe("detectFile", () => {
  it("reads the type from the bytes first, whatever was declared", () => {
    const declared = { mimeType: "text/plain", name: "notes.txt" };
    expect(detectFile(makePdf([["x"]], "t"), declared)).toMatchObject({ kind: "pdf", type: "pdf" });
    expect(detectFile(makePng(), declared)).toMatchObject({
      kind: "image",
      type: "image",
      mimeType: "image/png",
    });
    expect(detectFile(bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10), declared)).toMatchObject({
      mimeType: "image/jpeg",
    });
    expect(detectFile(text("GIF89a\x01\x00"), declared)).toMatchObject({ mimeType: "image/gif" });
    expect(detectFile(makeWav(), declared)).toMatchObject({
      kind: "audio",
      type: "audio",
      mimeType: "audio/wav",
    });
    expect(detectFile(text("ID3\x04\x00\x00"), declared)).toMatchObject({
      kind: "audio",
      mimeType: "audio/mpeg",
    });
    expect(detectFile(bytes(0, 0, 0, 0x18, ...text("ftypM4A "), 0), declared)).toMatchObject({
      kind: "audio",
      mimeType: "audio/mp4",
    });
    expect(detectFile(bytes(0, 0, 0, 0x18, ...text("ftypisom"), 0), declared)).toMatchObject({
      kind: "video",
      type: "video",
    });
    expect(detectFile(makeDocx(["Hello"]), declared)).toMatchObject({ kind: "docx", type: "docx" });
  });

  it("takes the declared type for text, which has no signature: fileType, then mimeType, then the extension", () => {
    const page = text("<p>Hello</p>");
    expect(detectFile(page, { mimeType: "text/html" })).toMatchObject({ kind: "html", type: "webpage" });
    expect(detectFile(page, { name: "page.htm" })).toMatchObject({ kind: "html" });
    expect(detectFile(page, { fileType: "text", mimeType: "text/html" })).toMatchObject({ kind: "text" });
    expect(detectFile(text("<!DOCTYPE html><html></html>"), {})).toMatchObject({ kind: "html" });
    expect(detectFile(text("# Title"), { name: "README.md" })).toMatchObject({
      kind: "markdown",
      type: "text",
    });
    expect(detectFile(text("plain words"), { mimeType: "application/octet-stream" })).toMatchObject({
      kind: "text",
      mimeType: "text/plain",
    });
  });

  it("keeps a media file it cannot recognise by the declared media type, and refuses other binaries", () => {
    const unknown = bytes(0x00, 0x01, 0x02, 0x03, 0xfe);
    expect(detectFile(unknown, { mimeType: "audio/x-exotic" })).toMatchObject({
      kind: "audio",
      type: "audio",
    });
    expect(() => detectFile(unknown, { mimeType: "application/x-msdownload" })).toThrow(UnsupportedFileError);
    expect(() => detectFile(unknown, {})).toThrow(/type is not supported.*PDF/);
    // A ZIP that is not a Word document is not read.
    expect(() => detectFile(makeZip({ "a.txt": "x" }), { name: "a.zip" })).toThrow(UnsupportedFileError);
  });
});

describe("resolveFile", () => {
  it("gives a media file a description and the file's name as title", async () => {
    const png = makePng();
    const out = await resolveFile({ bytes: png, name: "cat.png", mimeType: "image/png", kind: "image" });
    expect(out).toMatchObject({ type: "image", title: "cat.png" });
    expect(out.text).toBe(`Image file: cat.png\nContent type: image/png\nSize: ${png.byteLength} bytes`);
  });

  it("stores a Word document as type docx, as a PDF is pdf", async () => {
    const out = await resolveFile({
      bytes: makeDocx(["Minutes"]),
      name: "m.docx",
      mimeType: "x",
      kind: "docx",
    });
    expect(out).toMatchObject({ type: "docx", text: "Minutes" });
  });

  it("titles a PDF by the name it was uploaded under; its own Title only when it came without one", async () => {
    const pdf = makePdf([["Turbine test results"]], "Microsoft Word - draft3.docx");
    const named = await resolveFile({ bytes: pdf, name: "turbine-report.pdf", mimeType: "x", kind: "pdf" });
    expect(named).toMatchObject({ type: "pdf", title: "turbine-report.pdf" });
    const nameless = await resolveFile({ bytes: pdf, name: null, mimeType: "x", kind: "pdf" });
    expect(nameless.title).toBe("Microsoft Word - draft3.docx");
  });

  it("fails clearly on a damaged Word document", async () => {
    const broken = makeZip({ "word/document.xml": "<not-closed" });
    await expect(resolveFile({ bytes: broken, name: "b.docx", mimeType: "x", kind: "docx" })).rejects.toThrow(
      /not a readable Word document/,
    );
  });
});
