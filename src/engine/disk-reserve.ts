import { statfs } from "node:fs/promises";
import { type Endpoint, endpoints } from "../api/endpoints.js";
import { StorageFullError } from "./errors.js";

/**
 * Disk headroom: while the free space of the data directory's file system is below a reserve, new
 * content (documents, uploads, memories, connector syncs) is refused with 507, so that the jobs
 * already queued still have room to finish. The reserve is the setting (a share of the file
 * system, never less than DISK_RESERVE_FLOOR, or a size) plus PROCESSING_FACTOR times the content
 * still to process (a processed document takes about 7x its text: chunks, index, vectors), and a
 * request is refused when what it brings would take the free space under that. Reads, deletes and
 * settings go on; once space is back, writes are taken again, without a restart.
 */

/** A reserve as set: a share of the file system's size, or a number of bytes. */
export type DiskReserveSetting = { percent: number } | { bytes: number };

export const DISK_RESERVE_ENV = "MEMCTX_DISK_RESERVE";
export const DISK_RESERVE_FLAG = "--disk-reserve";
/** 5% of the file system: room for the backlog of a full queue, and the operator's warning. */
export const DISK_RESERVE_DEFAULT = "5%";
/**
 * The least a share keeps free, however small the file system: SQLite's WAL and a processing
 * commit need room that no queued document accounts for (on a 20 MB file system, 5% was 1 MB,
 * and free space reached 0).
 */
export const DISK_RESERVE_FLOOR = 64 * 1024 * 1024;
/** Disk a document takes once processed, per byte of its content (chunks, search index, vectors). */
export const PROCESSING_FACTOR = 7;

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** `5%`, `2GB`, `512MiB`, `1000000` (bytes); `0`: no reserve (null). Throws naming the accepted forms. */
export function parseDiskReserve(raw: string): DiskReserveSetting | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%|[kmgt]i?b|b)?\s*$/i.exec(raw);
  const n = m ? Number(m[1]) : Number.NaN;
  const unit = m?.[2]?.toLowerCase() ?? "";
  if (!m || !Number.isFinite(n) || (unit === "%" && n >= 100)) {
    throw new Error("must be a share of the disk below 100% (5%) or a size (2GB, 512MiB, bytes); 0 for none");
  }
  if (n === 0) return null;
  return unit === "%" ? { percent: n } : { bytes: Math.round(n * UNITS[unit]!) };
}

/** How a reserve reads: `5%` or `2 GB`. */
export const describeSetting = (s: DiskReserveSetting) =>
  "percent" in s ? `${s.percent}%` : formatBytes(s.bytes);

export const formatBytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(0)} MB` : `${n} bytes`;

export interface DiskState {
  /** Bytes this process may still write on the file system (statfs bavail). */
  free: number;
  size: number;
  /** What is kept free: the setting's bytes plus PROCESSING_FACTOR x `backlog`. */
  reserve: number;
  /** Bytes of content queued and not processed yet. */
  backlog: number;
}

/** The endpoints that bring new content: refused below the reserve (by method and path). */
const GROWING = new Set(
  [
    endpoints.addDocument,
    endpoints.addDocumentFile,
    endpoints.batchAdd,
    endpoints.legacyAddFile,
    endpoints.legacyAddDocument,
    endpoints.legacyAddConversation,
    endpoints.legacyAddMemories,
    endpoints.legacyUpdateMemory,
    endpoints.createConnector,
    endpoints.syncConnector,
  ].map((e) => `${e.method} ${e.path}`),
);
export const growsStore = (e: Pick<Endpoint, "method" | "path">) => GROWING.has(`${e.method} ${e.path}`);

/** How long a free-space reading is reused: a write burst does not ask the kernel per request. */
const FRESH_MS = 500;

/** The reserve of one data directory's file system. */
export class DiskReserve {
  private last: { at: number; state: Promise<DiskState> } | undefined;

  /** `backlog`: bytes of content still to process (store/jobs.ts unprocessedBytes). */
  constructor(
    private readonly dir: string,
    readonly setting: DiskReserveSetting,
    private readonly backlog: () => Promise<number> = async () => 0,
    private readonly now: () => number = Date.now,
  ) {}

  state(): Promise<DiskState> {
    const now = this.now();
    if (!this.last || now - this.last.at > FRESH_MS) {
      this.last = { at: now, state: readState(this.dir, this.setting, this.backlog) };
      // A failed reading is not kept.
      this.last.state.catch(() => {
        this.last = undefined;
      });
    }
    return this.last.state;
  }

  /** The next state() reads the disk again (a write just found it full). */
  forget(): void {
    this.last = undefined;
  }

  /**
   * Throws 507 naming the free space, the reserve and what to do when the free space, less what
   * this request brings (`incoming` bytes of content, processed later), is below the reserve.
   */
  async assertRoom(incoming = 0): Promise<void> {
    const { free, reserve, backlog } = await this.state();
    const needs = reserve + PROCESSING_FACTOR * incoming;
    if (free >= needs) return;
    const kept = `${describeSetting(this.setting)}${"percent" in this.setting ? `, at least ${formatBytes(DISK_RESERVE_FLOOR)}` : ""}`;
    const queued =
      backlog > 0
        ? `, plus ${PROCESSING_FACTOR}x the ${formatBytes(backlog)} of content still to process`
        : "";
    const brings =
      incoming > 0 ? `, plus ${PROCESSING_FACTOR}x the ${formatBytes(incoming)} this request brings` : "";
    throw new StorageFullError(
      "Disk space low",
      `the data directory's file system has ${formatBytes(free)} free, below the reserve of ${formatBytes(needs)} ` +
        `(${kept}, ${DISK_RESERVE_FLAG} / ${DISK_RESERVE_ENV}${queued}${brings}) kept so that queued documents ` +
        "can finish; nothing was written. Free space on it (or lower the reserve) and send the request again",
    );
  }
}

async function readState(
  dir: string,
  setting: DiskReserveSetting,
  backlog: () => Promise<number>,
): Promise<DiskState> {
  const [s, queued] = await Promise.all([statfs(dir), backlog()]);
  const size = s.blocks * s.bsize;
  const base =
    "percent" in setting
      ? Math.max(Math.round((size * setting.percent) / 100), DISK_RESERVE_FLOOR)
      : setting.bytes;
  return { free: s.bavail * s.bsize, size, reserve: base + PROCESSING_FACTOR * queued, backlog: queued };
}

/**
 * Whether processing has room to go on after a full disk stopped it: at least DISK_RESERVE_FLOOR
 * free on the data directory's file system.
 */
export async function hasRoom(dir: string): Promise<boolean> {
  const s = await statfs(dir);
  return s.bavail * s.bsize >= DISK_RESERVE_FLOOR;
}
