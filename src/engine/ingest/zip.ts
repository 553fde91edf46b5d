import { crc32, inflateRawSync } from "node:zlib";

/**
 * A ZIP archive (a Word document) read with bounded output: its central directory's sizes are
 * checked before anything is inflated, and each entry is inflated by node:zlib with an output
 * limit, so a directory that understates a size (a zip bomb) cannot make more than it declared.
 */

/** Bytes all the entries read from one archive may inflate to, together. */
export const INFLATED_MAX_ENV = "MEMCTX_MAX_INFLATED_BYTES";
/** Bytes one entry may inflate to. */
export const ENTRY_MAX_ENV = "MEMCTX_MAX_INFLATED_ENTRY_BYTES";
/**
 * Defaults sized to the conversion's memory cap (pipeline/extraction.ts, 512 MB): mammoth read 8 MB
 * of paragraph XML (about 1,500 pages) in 14 s with a 512 MB heap, and ran out of it on 12 MB.
 */
export const INFLATED_MAX_DEFAULT = 32 * 1024 * 1024;
export const ENTRY_MAX_DEFAULT = 8 * 1024 * 1024;

export interface InflateLimits {
  total: number;
  entry: number;
}

/** The limits from the environment (a processing thread reads the same variables). */
export function inflateLimits(env: NodeJS.ProcessEnv = process.env): InflateLimits {
  const read = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return env[name] && Number.isSafeInteger(v) && v > 0 ? v : fallback;
  };
  return {
    total: read(INFLATED_MAX_ENV, INFLATED_MAX_DEFAULT),
    entry: read(ENTRY_MAX_ENV, ENTRY_MAX_DEFAULT),
  };
}

/** An archive memctx will not inflate: the message names the limit and its variable. */
export class ArchiveLimitError extends Error {
  override name = "ArchiveLimitError";
}

/** A file that is not a ZIP archive memctx can read (damaged, encrypted, ZIP64). */
export class BadArchiveError extends Error {
  override name = "BadArchiveError";
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressed: number;
  size: number;
  localOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/**
 * The central directory's entries. Those `read` says will be read must declare sizes within the
 * limits (a Word document's XML: its pictures are never inflated to read its text).
 */
export function readDirectory(
  bytes: Uint8Array,
  limits: InflateLimits = inflateLimits(),
  read: (name: string) => boolean = () => true,
): Map<string, Entry> {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record is the last 22 bytes, unless a comment (at most 65,535 bytes) follows it.
  let end = -1;
  for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 0xffff); i--) {
    if (b.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new BadArchiveError("not a ZIP archive (no end of central directory)");
  const count = b.readUInt16LE(end + 10);
  const dirSize = b.readUInt32LE(end + 12);
  const dirOffset = b.readUInt32LE(end + 16);
  if (count === 0xffff || dirOffset === 0xffffffff) throw new BadArchiveError("ZIP64 archives are not read");
  if (dirOffset + dirSize > end) throw new BadArchiveError("the central directory lies outside the file");
  const entries = new Map<string, Entry>();
  let total = 0;
  let at = dirOffset;
  for (let n = 0; n < count; n++) {
    if (at + 46 > end || b.readUInt32LE(at) !== CENTRAL)
      throw new BadArchiveError("damaged central directory");
    const nameLength = b.readUInt16LE(at + 28);
    const entry: Entry = {
      flags: b.readUInt16LE(at + 8),
      method: b.readUInt16LE(at + 10),
      crc: b.readUInt32LE(at + 16),
      compressed: b.readUInt32LE(at + 20),
      size: b.readUInt32LE(at + 24),
      localOffset: b.readUInt32LE(at + 42),
      name: b.toString("utf8", at + 46, at + 46 + nameLength),
    };
    at += 46 + nameLength + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
    entries.set(entry.name, entry);
    if (!read(entry.name)) continue;
    if (entry.size > limits.entry) throw entryTooLarge(entry.name, limits);
    total += entry.size;
    if (total > limits.total) throw totalTooLarge(limits);
  }
  return entries;
}

const entryTooLarge = (name: string, limits: InflateLimits) =>
  new ArchiveLimitError(
    `${name} inflates to more than ${limits.entry} bytes, the limit per archive entry (${ENTRY_MAX_ENV})`,
  );
const totalTooLarge = (limits: InflateLimits) =>
  new ArchiveLimitError(
    `the archive inflates to more than ${limits.total} bytes, the limit per document (${INFLATED_MAX_ENV})`,
  );

/**
 * The archive as mammoth's `file` option reads it (exists / read): each entry inflated on first
 * read, at most its declared size, and what all reads inflate counted against the total.
 */
export function openZip(
  bytes: Uint8Array,
  limits: InflateLimits = inflateLimits(),
  read: (name: string) => boolean = () => true,
) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries = readDirectory(bytes, limits, read);
  let inflated = 0;
  const inflate = (entry: Entry): Buffer => {
    if (entry.flags & 1) throw new BadArchiveError(`${entry.name} is encrypted`);
    const at = entry.localOffset;
    if (at + 30 > b.length || b.readUInt32LE(at) !== LOCAL)
      throw new BadArchiveError(`${entry.name}: damaged entry`);
    const start = at + 30 + b.readUInt16LE(at + 26) + b.readUInt16LE(at + 28);
    if (start + entry.compressed > b.length) throw new BadArchiveError(`${entry.name}: cut off`);
    const data = b.subarray(start, start + entry.compressed);
    let out: Buffer;
    if (entry.method === 0) out = data;
    else if (entry.method === 8) {
      try {
        // One byte more than declared: output past the declared size means the directory lied.
        out = inflateRawSync(data, { maxOutputLength: entry.size + 1 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw lying(entry, limits);
        throw new BadArchiveError(`${entry.name}: ${(err as Error).message}`);
      }
    } else throw new BadArchiveError(`${entry.name}: compression method ${entry.method} is not read`);
    if (out.length > entry.size) throw lying(entry, limits);
    if (out.length > limits.entry) throw entryTooLarge(entry.name, limits);
    if (out.length < entry.size) throw new BadArchiveError(`${entry.name}: shorter than its declared size`);
    if (crc32(out) !== entry.crc) throw new BadArchiveError(`${entry.name}: checksum mismatch`);
    inflated += out.length;
    if (inflated > limits.total) throw totalTooLarge(limits);
    return out;
  };
  return {
    exists: (name: string) => entries.has(name),
    read: async (name: string, encoding?: string): Promise<Uint8Array | string> => {
      const entry = entries.get(name);
      if (!entry) throw new BadArchiveError(`no entry ${name}`);
      const out = inflate(entry);
      if (encoding === "base64") return out.toString("base64");
      return encoding ? new TextDecoder(encoding).decode(out) : new Uint8Array(out);
    },
  };
}

/** An entry whose data inflates to another size than the directory says: refused as a bomb would be. */
const lying = (entry: Entry, limits: InflateLimits) =>
  new ArchiveLimitError(
    `${entry.name} inflates to more than the ${entry.size} bytes its directory entry declares ` +
      `(refused: the archive's sizes are checked against ${ENTRY_MAX_ENV}=${limits.entry} and ${INFLATED_MAX_ENV}=${limits.total})`,
  );
