import { statfs } from "node:fs/promises";
import { type Endpoint, endpoints } from "../api/endpoints.js";
import { StorageFullError } from "./errors.js";

/**
 * Disk headroom: while the free space of the data directory's file system is below a reserve, new
 * content (documents, uploads, memories, connector syncs) is refused with 507, so that the jobs
 * already queued still have room to finish (a processed document takes about 7x its text). Reads,
 * deletes and settings go on; once space is back, writes are taken again, without a restart.
 */

/** A reserve as set: a share of the file system's size, or a number of bytes. */
export type DiskReserveSetting = { percent: number } | { bytes: number };

export const DISK_RESERVE_ENV = "MEMCTX_DISK_RESERVE";
export const DISK_RESERVE_FLAG = "--disk-reserve";
/** 5% of the file system: room for the backlog of a full queue, and the operator's warning. */
export const DISK_RESERVE_DEFAULT = "5%";

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
  reserve: number;
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

  constructor(
    private readonly dir: string,
    readonly setting: DiskReserveSetting,
    private readonly now: () => number = Date.now,
  ) {}

  state(): Promise<DiskState> {
    const now = this.now();
    if (!this.last || now - this.last.at > FRESH_MS) {
      this.last = { at: now, state: readState(this.dir, this.setting) };
    }
    return this.last.state;
  }

  /** Throws 507 naming the free space, the reserve and what to do while below the reserve. */
  async assertRoom(): Promise<void> {
    const { free, reserve } = await this.state();
    if (free >= reserve) return;
    throw new StorageFullError(
      "Disk space low",
      `the data directory's file system has ${formatBytes(free)} free, below the reserve of ${formatBytes(reserve)} ` +
        `(${describeSetting(this.setting)}, ${DISK_RESERVE_FLAG} / ${DISK_RESERVE_ENV}) kept so that queued documents ` +
        "can finish; nothing was written. Free space on it (or lower the reserve) and send the request again",
    );
  }
}

async function readState(dir: string, setting: DiskReserveSetting): Promise<DiskState> {
  const s = await statfs(dir);
  const size = s.blocks * s.bsize;
  const reserve = "percent" in setting ? Math.round((size * setting.percent) / 100) : setting.bytes;
  return { free: s.bavail * s.bsize, size, reserve };
}
