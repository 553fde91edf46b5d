/**
 * Small, valid files written byte by byte for upload tests: a PNG image and a Word document (a
 * ZIP of stored entries, the parts Word needs). PDFs come from pdf-fixture.ts.
 */
import { crc32, deflateRawSync, deflateSync } from "node:zlib";

/** A PNG of `width` x `height` grey pixels. */
export function makePng(width = 2, height = 2): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const rows = Buffer.concat(
    Array.from({ length: height }, () => Buffer.from([0, ...Array(width).fill(128)])),
  );
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(rows)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

/**
 * A ZIP archive: entries stored as they are, or deflated (`deflate`); `declare` overrides the
 * sizes its directories give an entry (a zip bomb's lie).
 */
export function makeZip(
  files: Record<string, string | Buffer>,
  opts: { deflate?: boolean; declare?: Record<string, number> } = {},
): Uint8Array {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const raw = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    const data = opts.deflate ? deflateRawSync(raw, { level: 9 }) : raw;
    const size = opts.declare?.[name] ?? raw.length;
    const nameBytes = Buffer.from(name, "utf8");
    const crc = crc32(raw);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(opts.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(opts.deflate ? 8 : 0, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(nameBytes.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    central.push(entry, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, dir, end]));
}

const xmlText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
/** The parts of a Word document beside its text: Word's content types and the main part's relation. */
const DOCX_PARTS = {
  "[Content_Types].xml":
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  "_rels/.rels":
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
};

/** A Word (.docx) document with one paragraph per string. */
export function makeDocx(paragraphs: string[]): Uint8Array {
  return makeZip({
    ...DOCX_PARTS,
    "word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${paragraphs
      .map((p) => `<w:p><w:r><w:t>${xmlText(p)}</w:t></w:r></w:p>`)
      .join("")}</w:body></w:document>`,
  });
}

/**
 * A zip bomb: a Word document whose text part inflates to about `bytes` of paragraphs from a
 * deflated part a thousand times smaller. `lie` declares the part 1 KB in the directories.
 */
export function makeDocxBomb(bytes: number, opts: { lie?: boolean } = {}): Uint8Array {
  const head = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>`);
  const tail = Buffer.from("</w:body></w:document>");
  const paragraph = "<w:p><w:r><w:t>all work and no play makes a dull document</w:t></w:r></w:p>";
  const body = Buffer.alloc(Math.max(0, bytes - head.length - tail.length), paragraph);
  const xml = Buffer.concat([head, body.subarray(0, body.length - (body.length % paragraph.length)), tail]);
  return makeZip(
    { ...DOCX_PARTS, "word/document.xml": xml },
    { deflate: true, ...(opts.lie ? { declare: { "word/document.xml": 1024 } } : {}) },
  );
}

/** A WAV file of `samples` silent 8-bit mono samples. */
export function makeWav(samples = 8): Uint8Array {
  const b = Buffer.alloc(44 + samples, 0x80);
  b.write("RIFF", 0, "latin1");
  b.writeUInt32LE(36 + samples, 4);
  b.write("WAVEfmt ", 8, "latin1");
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24); // sample rate
  b.writeUInt32LE(8000, 28); // byte rate
  b.writeUInt16LE(1, 32); // block align
  b.writeUInt16LE(8, 34); // bits per sample
  b.write("data", 36, "latin1");
  b.writeUInt32LE(samples, 40);
  return new Uint8Array(b);
}
