export interface PdfText {
  title: string | null;
  text: string;
  pages: number;
}

/** The page break between pages of extracted text: a form feed on its own line, as pdftotext writes it. */
export const PDF_PAGE_BREAK = "\n\f\n";

/** PDF bytes to text, page by page; a PDF without a text layer (scanned) gives empty text. */
export async function pdfToText(bytes: Uint8Array): Promise<PdfText> {
  // The PDF reader loads with the first PDF, not at start.
  const { extractText, getDocumentProxy, getMeta } = await import("unpdf");
  // pdf.js may transfer (detach) the buffer it is given; it gets a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes)).catch((error: unknown) => {
    throw new Error(`not a readable PDF: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  });
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => null);
    const rawTitle = (meta?.info as { Title?: unknown } | undefined)?.Title;
    const title = typeof rawTitle === "string" && rawTitle.trim() !== "" ? rawTitle.trim() : null;
    return {
      title,
      text: text
        .map((page) => page.trim())
        .join(PDF_PAGE_BREAK)
        .trim(),
      pages: totalPages,
    };
  } finally {
    await pdf.destroy();
  }
}
