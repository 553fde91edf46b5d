import { describe, expect, it } from "vitest";
import { PDF_PAGE_BREAK, pdfToText } from "../../../src/engine/ingest/pdf.js";
import { makePdf } from "./pdf-fixture.js";

describe("pdfToText", () => {
  const pdf = makePdf(
    [["Caroline moved to Berlin.", "She likes (rye) bread."], ["Page two."], ["Page three."]],
    "Notes",
  );

  it("reads a real PDF (the fixture's cross-reference offsets point at its objects)", () => {
    const source = Buffer.from(pdf).toString("latin1");
    const xref = Number(/startxref\n(\d+)/.exec(source)?.[1]);
    expect(source.slice(xref, xref + 4)).toBe("xref");
    const offsets = [...source.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    expect(offsets.length).toBeGreaterThan(5);
    offsets.forEach((offset, i) => {
      expect(source.slice(offset).startsWith(`${i + 1} 0 obj`)).toBe(true);
    });
  });

  it("extracts each page's text, with a page break between pages, and the title", async () => {
    const result = await pdfToText(pdf);
    expect(result.pages).toBe(3);
    expect(result.title).toBe("Notes");
    expect(result.text.split(PDF_PAGE_BREAK)).toEqual([
      "Caroline moved to Berlin.\nShe likes (rye) bread.",
      "Page two.",
      "Page three.",
    ]);
  });

  it("leaves the caller's bytes usable", async () => {
    const copy = new Uint8Array(pdf);
    await pdfToText(copy);
    expect(copy.byteLength).toBe(pdf.byteLength);
    expect((await pdfToText(copy)).pages).toBe(3);
  });

  it("rejects bytes that are not a PDF", async () => {
    await expect(pdfToText(new TextEncoder().encode("%PDF-1.4 but nothing else"))).rejects.toThrow(
      "not a readable PDF",
    );
  });
});
