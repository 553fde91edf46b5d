import { describe, expect, it } from "vitest";
import { FILE_MAX_BYTES } from "../../src/api/index.js";
import { serverPerFile } from "../support/harness.js";
import { makeDocx, makeDocxBomb, makePng, makeWav } from "./ingest/file-fixtures.js";
import { makePdf } from "./ingest/pdf-fixture.js";

/** Uploads over real HTTP to the engine on 127.0.0.1, with files made byte by byte here. */
describe("file uploads", () => {
  const { server, client } = serverPerFile();

  /** The first chunk hit for `query` in `ns`, with its document id. */
  const chunkHit = async (ns: string, query: string) => {
    const res = await client.ns(ns).search({ query, searchMode: "chunks", threshold: 0 });
    return res.results.find((r) => r.chunk !== undefined);
  };

  const withoutTag = (form: FormData) => {
    form.delete("containerTag");
    return form;
  };

  /** A raw multipart request, for what the client refuses to send. */
  const upload = (path: string, form: FormData, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, ...headers },
      body: form,
    });

  it("reads a PDF's text, and search finds it", async () => {
    const pdf = makePdf(
      [["Quarterly report for the Atlas project"], ["The turbine prototype passed its endurance test"]],
      "Atlas quarterly",
    );
    const added = await client
      .ns("pdfs")
      .documents.addFile({ file: pdf, filename: "atlas.pdf", metadata: { project: "atlas" } });
    expect(added.status).toBe("queued");
    const doc = await client.ns("pdfs").documents.waitFor(added.id);
    expect(doc.type).toBe("pdf");
    // The uploaded name is the user's; the PDF's own Title ("Atlas quarterly") does not replace it.
    expect(doc.title).toBe("atlas.pdf");
    expect(doc.content).toContain("turbine prototype passed its endurance test");
    expect(doc.metadata).toEqual({ project: "atlas" });
    const hit = await chunkHit("pdfs", "turbine endurance");
    expect(hit?.documentId).toBe(added.id);
  });

  it("reads an HTML page as a web page without its markup", async () => {
    const html = `<!doctype html><html><head><title>Harbour opening hours</title><script>var x = "scriptnoise";</script></head>
      <body><nav>Home | About</nav><h1>Opening hours</h1><p>The harbour office opens at <b>seven</b> on weekdays.</p></body></html>`;
    const file = new File([html], "hours.html", { type: "text/html" });
    const added = await client.ns("pages").documents.addFile({ file });
    const doc = await client.ns("pages").documents.waitFor(added.id);
    expect(doc.type).toBe("webpage");
    expect(doc.title).toBe("Harbour opening hours");
    expect(doc.content).toContain("The harbour office opens at seven on weekdays.");
    expect(doc.content).not.toContain("<p>");
    expect(doc.content).not.toContain("scriptnoise");
    expect((await chunkHit("pages", "harbour office weekdays"))?.documentId).toBe(added.id);
  });

  it("reads Markdown by its extension, and takes the caller's id (re-sending the same file upserts)", async () => {
    const md = "# Release checklist\n\n- Sign the binaries with the hardware key\n- Publish the changelog\n";
    const file = new File([md], "checklist.md");
    const ns = client.ns("notes");
    const added = await ns.documents.addFile({ file, id: "checklist" });
    const doc = await ns.documents.waitFor("checklist");
    expect(doc.id).toBe(added.id);
    expect(doc.customId).toBe("checklist");
    expect(doc.type).toBe("text");
    expect(doc.title).toBe("Release checklist");
    expect(doc.content).toContain("Sign the binaries with the hardware key");
    expect((await chunkHit("notes", "hardware key binaries"))?.documentId).toBe(added.id);
    const again = await ns.documents.addFile({ file, id: "checklist" });
    expect(again).toEqual({ id: added.id, status: "done" });
  });

  it("reads a Word document's paragraphs", async () => {
    const docx = makeDocx(["Minutes of the board meeting", "The board approved the new warehouse in Porto."]);
    const added = await client.ns("office").documents.addFile({ file: docx, filename: "minutes.docx" });
    const doc = await client.ns("office").documents.waitFor(added.id);
    expect(doc.type).toBe("docx");
    expect(doc.content).toContain("The board approved the new warehouse in Porto.");
    expect((await chunkHit("office", "warehouse Porto"))?.documentId).toBe(added.id);
  });

  it("keeps an image as an image document, found by its name, with no memories drawn from it", async () => {
    // A name that reads like a fact: memories made from it would be invented.
    const png = makePng(4, 4);
    const name = "Alice moved to Lisbon in 2021.png";
    const ns = client.ns("images");
    // Declared as a PDF: the bytes win.
    const added = await ns.documents.addFile({
      file: png,
      filename: name,
      mimeType: "application/pdf",
      dreaming: "instant",
    });
    const doc = await ns.documents.waitFor(added.id, { until: "memories" });
    expect(doc.type).toBe("image");
    expect(doc.title).toBe(name);
    expect(doc.content).toContain("image/png");
    expect(doc.content).toContain(`${png.byteLength} bytes`);
    const withMemories = await ns.documents.get(added.id, { include: ["memories"] });
    expect(withMemories.memories).toEqual([]);
    const memories = await ns.memories.list();
    expect(memories.memories).toEqual([]);
    expect((await chunkHit("images", "Lisbon"))?.documentId).toBe(added.id);
  });

  it("keeps an audio file as an audio document, with no memories", async () => {
    const wav = makeWav(64);
    const ns = client.ns("audio");
    const added = await ns.documents.addFile({
      file: wav,
      filename: "Bob bought a boat.wav",
      dreaming: "instant",
    });
    const doc = await ns.documents.waitFor(added.id, { until: "memories" });
    expect(doc.type).toBe("audio");
    expect(doc.content).toContain("audio/wav");
    expect((await ns.memories.list()).memories).toEqual([]);
  });

  it("draws memories from an uploaded text file (the image above is the exception, not the rule)", async () => {
    const ns = client.ns("texts");
    const file = new File(["Alice moved to Lisbon in 2021."], "alice.txt", { type: "text/plain" });
    const added = await ns.documents.addFile({ file, dreaming: "instant" });
    await ns.documents.waitFor(added.id, { until: "memories" });
    const memories = await ns.memories.list();
    expect(memories.memories.length).toBeGreaterThan(0);
  });

  it("refuses a file over 50 MB with 413 naming the field and the limit, and stores nothing", async () => {
    const big = new Uint8Array(FILE_MAX_BYTES + 1).fill(0x61);
    const form = new FormData();
    form.append("id", "too-big");
    form.append("file", new File([big], "big.txt", { type: "text/plain" }));
    const res = await upload("/ns/big/document/file", form);
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: string; details: string };
    expect(body.details).toContain("file");
    expect(body.details).toContain(`${FILE_MAX_BYTES} bytes`);
    const list = await client.ns("big").documents.list();
    expect(list.documents).toEqual([]);
    // The namespace was not created either.
    const namespaces = await client.namespaces.list({ limit: 100 });
    expect(namespaces.namespaces.map((n) => n.namespace)).not.toContain("big");
    // A file of exactly 50 MB is taken.
    const exact = new FormData();
    exact.append("file", new File([big.subarray(0, FILE_MAX_BYTES)], "exact.txt", { type: "text/plain" }));
    const ok = await upload("/ns/big/document/file", exact);
    expect(ok.status).toBe(200);
    // Processed to its end here: the tests after this one are not about waiting behind it.
    const { id } = (await ok.json()) as { id: string };
    expect((await client.ns("big").documents.waitFor(id)).system.status).toBe("done");
  });

  it("refuses a Word document whose archive declares more than it may inflate to with 413 naming the limit, storing nothing", async () => {
    const bomb = makeDocxBomb(150 * 1024 * 1024);
    for (const path of ["/ns/bomb/document/file", "/v3/documents/file"]) {
      const form = new FormData();
      form.append("file", new File([new Uint8Array(bomb)], "bomb.docx"));
      form.append("containerTag", "bomb");
      const res = await upload(path, path.startsWith("/v3") ? form : withoutTag(form));
      expect(res.status).toBe(413);
      const body = (await res.json()) as { error: string; details: string };
      expect(body.error).toBe("File inflates too far");
      expect(body.details).toMatch(
        /^file: word\/document\.xml inflates to more than 8388608 bytes, the limit per archive entry \(MEMCTX_MAX_INFLATED_ENTRY_BYTES\)/,
      );
    }
    const namespaces = await client.namespaces.list({ limit: 100 });
    expect(namespaces.namespaces.map((n) => n.namespace)).not.toContain("bomb");
  });

  it("refuses a file over 50 MB sent without a Content-Length (chunked), counting the stream", async () => {
    const boundary = "memctxboundary";
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const slice = Buffer.alloc(1024 * 1024, 0x62);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head);
        if (sent > FILE_MAX_BYTES + 2 * slice.length) {
          controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
          controller.close();
          return;
        }
        controller.enqueue(slice);
        sent += slice.length;
      },
    });
    const res = await fetch(`${server.url}/ns/chunked/document/file`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.key}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { details: string }).details).toContain("file: must be at most");
    expect((await client.ns("chunked").documents.list()).documents).toEqual([]);

    // A file within the limit, in several chunks without a Content-Length, arrives whole.
    const pieces = [
      head,
      Buffer.from("The ferry leaves at noon. "),
      Buffer.from("Bring the tickets."),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ];
    const small = await fetch(`${server.url}/ns/chunked/document/file`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.key}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      body: new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = pieces.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(small.status).toBe(200);
    const { id } = (await small.json()) as { id: string };
    const doc = await client.ns("chunked").documents.waitFor(id);
    expect(doc.content).toBe("The ferry leaves at noon. Bring the tickets.");
  });

  it("answers 400 naming the field for bad fields, a missing file or an unsupported type, storing nothing", async () => {
    const bad = new FormData();
    bad.append("metadata", "{not json");
    bad.append("file", new File(["hello"], "a.txt"));
    let res = await upload("/ns/bad/document/file", bad);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toMatch(/^metadata: must be a flat object/);

    const noFile = new FormData();
    noFile.append("id", "x");
    res = await upload("/ns/bad/document/file", noFile);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toContain("file: required");

    const binary = new FormData();
    binary.append("file", new File([new Uint8Array([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0])], "tool.exe"));
    res = await upload("/ns/bad/document/file", binary);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toMatch(
      /^file: the file's type is not supported/,
    );

    res = await server.call("POST", "/ns/bad/document/file", { body: { content: "json is not a form" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toContain("multipart/form-data");

    expect((await client.ns("bad").documents.list()).documents).toEqual([]);
  });

  it("takes the legacy v3 upload: containerTag, customId, metadata as a JSON string -> {id, status}", async () => {
    const pdf = makePdf([["Legacy upload about the Orion telescope mirror"]], "Orion");
    const res = await client.legacy.documents.addFile({
      file: pdf,
      filename: "orion.pdf",
      containerTag: "legacy_tag",
      customId: "orion-1",
      metadata: { source: "v3" },
    });
    expect(res.status).toBe("queued");
    const doc = await client.ns("legacy_tag").documents.waitFor("orion-1");
    expect(doc.id).toBe(res.id);
    expect(doc.type).toBe("pdf");
    expect(doc.metadata).toEqual({ source: "v3" });
    expect((await chunkHit("legacy_tag", "Orion telescope mirror"))?.documentId).toBe(res.id);

    const tags = new FormData();
    tags.append("containerTags", '["legacy_two"]');
    tags.append("file", new File(["Second legacy file"], "two.txt"));
    const two = await upload("/v3/documents/file", tags);
    expect(two.status).toBe(200);
    const { id } = (await two.json()) as { id: string };
    expect((await client.ns("legacy_two").documents.get(id)).id).toBe(id);

    const badTag = new FormData();
    badTag.append("containerTag", "no spaces allowed");
    badTag.append("file", new File(["x"], "x.txt"));
    const refused = await upload("/v3/documents/file", badTag);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { details: string }).details).toMatch(/^containerTag: must match/);
  });

  it("replaces a file with text sent later under the same id", async () => {
    const ns = client.ns("replace");
    await ns.documents.addFile({
      file: makePdf([["Old PDF text about zebras"]], "Z"),
      filename: "z.pdf",
      id: "z",
    });
    await ns.documents.waitFor("z");
    await ns.documents.add({ content: "New text about giraffes", id: "z" });
    const doc = await ns.documents.waitFor("z");
    expect(doc.type).toBe("text");
    expect(doc.content).toBe("New text about giraffes");
    expect(await chunkHit("replace", "zebras")).toBeUndefined();
  });
});
