import { defaultDataDir } from "../engine/data-dir.js";
import {
  DISK_RESERVE_DEFAULT,
  DISK_RESERVE_ENV,
  DISK_RESERVE_FLAG,
  type DiskReserveSetting,
  parseDiskReserve,
} from "../engine/disk-reserve.js";
import { CliError } from "./cli-error.js";

/** What `memctx serve` and `memctx ui` both take: where to listen, how many processing threads, which data. */
export interface ServerOptions {
  port: number;
  workers: number | undefined;
  dataDir: string;
  /** MEMCTX_API_KEY, registered for the local organization. */
  apiKey: string | undefined;
}

/** Checks the shared options of the commands that start the engine's HTTP server. */
export function serverOptions(values: {
  port: string;
  workers?: string | undefined;
  "data-dir"?: string | undefined;
}): ServerOptions {
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError("--port must be 0 to 65535");
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0)) {
    throw new CliError("--workers must be a whole number, 0 or more");
  }
  const apiKey = process.env.MEMCTX_API_KEY || undefined;
  if (apiKey !== undefined && apiKey.length < 8)
    throw new CliError("MEMCTX_API_KEY must be at least 8 characters");
  return { port, workers, dataDir: values["data-dir"] ?? defaultDataDir(), apiKey };
}

/** What `memctx serve` limits, from its flags, else the environment; absent: no limit. */
export interface LimitOptions {
  requestsPerMinute: number | null;
  documentTokenQuota: number | null;
  diskReserve: DiskReserveSetting | null;
}

/**
 * `--rate-limit` (MEMCTX_RATE_LIMIT) and `--document-token-quota` (MEMCTX_DOCUMENT_TOKEN_QUOTA); 0
 * turns either off. `--disk-reserve`: see diskReserveOption.
 */
export function limitOptions(
  values: {
    "rate-limit"?: string | undefined;
    "document-token-quota"?: string | undefined;
    "disk-reserve"?: string | undefined;
  },
  env: NodeJS.ProcessEnv = process.env,
): LimitOptions {
  const read = (flag: string, variable: string, given: string | undefined): number | null => {
    const raw = given ?? (env[variable]?.trim() || undefined);
    if (raw === undefined) return null;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
      throw new CliError(
        `${given === undefined ? variable : flag} must be a whole number, 0 or more (0: no limit)`,
      );
    }
    return n === 0 ? null : n;
  };
  return {
    requestsPerMinute: read("--rate-limit", "MEMCTX_RATE_LIMIT", values["rate-limit"]),
    documentTokenQuota: read(
      "--document-token-quota",
      "MEMCTX_DOCUMENT_TOKEN_QUOTA",
      values["document-token-quota"],
    ),
    diskReserve: diskReserveOption(values["disk-reserve"], env),
  };
}

/** `--disk-reserve` (MEMCTX_DISK_RESERVE), else 5% of the data directory's file system; 0 turns it off. */
export function diskReserveOption(
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): DiskReserveSetting | null {
  const raw = given ?? (env[DISK_RESERVE_ENV]?.trim() || DISK_RESERVE_DEFAULT);
  try {
    return parseDiskReserve(raw);
  } catch (err) {
    throw new CliError(
      `${given === undefined ? DISK_RESERVE_ENV : DISK_RESERVE_FLAG} ${(err as Error).message}`,
    );
  }
}
