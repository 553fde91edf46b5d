import { existsSync } from "node:fs";
import { join } from "node:path";
import { LIST_LIMIT_MAX, type NamespaceSummary } from "../../api/index.js";
import { DEFAULT_NAMESPACE } from "../../mcp/roots.js";
import { plural } from "../../plural.js";
import { VERSION } from "../../version.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { type Backend, describeBackend, openBackend, setting } from "../backend.js";
import { diskReserveOption } from "../server-options.js";
import type { Command } from "./command.js";

/** Namespaces listed one by one; more are counted only. */
const NAMESPACES_SHOWN = 20;

async function allNamespaces(backend: Backend): Promise<NamespaceSummary[]> {
  const out: NamespaceSummary[] = [];
  for (let page = 1; ; page++) {
    const res = await backend.client.namespaces.list({ page, limit: LIST_LIMIT_MAX });
    out.push(...res.namespaces);
    if (!res.pagination || page >= res.pagination.totalPages || !res.namespaces.length) return out;
  }
}

/** The data directory's free space and the reserve `memctx serve` keeps there (MEMCTX_DISK_RESERVE). */
async function diskLine(dir: string): Promise<string> {
  const { DiskReserve, describeSetting, formatBytes } = await import("../../engine/disk-reserve.js");
  const reserve = diskReserveOption(undefined);
  if (!reserve) return `memctx serve keeps no reserve (MEMCTX_DISK_RESERVE=0)`;
  const { free, size, reserve: bytes } = await new DiskReserve(dir, reserve).state();
  return (
    `${formatBytes(free)} free of ${formatBytes(size)}; memctx serve refuses new content (507) below ` +
    `${formatBytes(bytes)} (reserve ${describeSetting(reserve)}, --disk-reserve / MEMCTX_DISK_RESERVE)` +
    (free < bytes ? ": below it now, free space" : "")
  );
}

/** The flags of `memctx status`, each one listed in its usage (a test holds them to it). */
const options = { "data-dir": { type: "string" } } as const satisfies FlagOptions;

export const status: Command = {
  name: "status",
  options,
  summary: "Say which version, data and models memctx uses, and what is stored",
  usage: `
Usage: memctx status [--data-dir DIR]

Prints the version, where the API lives (the embedded engine's data directory, or MEMCTX_API_URL),
the embedder and extractor in use, the namespace an MCP session gets, and the counts of
namespaces, documents and memories, with the embedded engine's pending background jobs and its
data directory's free space against the disk reserve of memctx serve (MEMCTX_DISK_RESERVE).
It reads only: no job runs while it looks.

Options:
  --data-dir DIR  data directory (default: MEMCTX_DATA_DIR or the user data directory)
  -h, --help      show this help`,
  async run(argv) {
    const { values } = parseFlags("status", { args: argv, options });
    const dataDir = values["data-dir"]?.trim() || undefined;
    const namespace = setting(process.env, "MEMCTX_NAMESPACE");
    const line = (label: string, value: string | number) =>
      process.stdout.write(`${`${label}:`.padEnd(14)}${value}\n`);
    process.stdout.write(`memctx ${VERSION} (Node ${process.versions.node})\n`);

    let dir: string | undefined;
    if (!setting(process.env, "MEMCTX_API_URL")) {
      // Looking must not create a data directory where there is none.
      const { defaultDataDir } = await import("../../engine/data-dir.js");
      const { DATABASE_FILE } = await import("../../engine/store/db.js");
      dir =
        dataDir ??
        defaultDataDir({ ...process.env, MEMCTX_DATA_DIR: setting(process.env, "MEMCTX_DATA_DIR") });
      if (!existsSync(join(dir, DATABASE_FILE))) {
        line("api", `embedded engine in ${dir} (nothing stored yet: the first MCP session creates it)`);
        return 0;
      }
    }
    const backend = await openBackend(process.env, { ...(dataDir ? { dataDir } : {}), workers: 0 });
    try {
      line("api", describeBackend(backend));
      line(
        "namespace",
        namespace ? `${namespace} (MEMCTX_NAMESPACE)` : `from the client's roots, else ${DEFAULT_NAMESPACE}`,
      );
      const namespaces = await allNamespaces(backend);
      const sum = (k: "documentCount" | "memoryCount") => namespaces.reduce((n, ns) => n + ns[k], 0);
      line("namespaces", namespaces.length);
      line("documents", sum("documentCount"));
      line("memories", sum("memoryCount"));
      const jobs = await backend.jobCounts();
      if (jobs) {
        const pending = (jobs.queued ?? 0) + (jobs.running ?? 0);
        const detail = Object.entries(jobs)
          .map(([state, n]) => `${state} ${n}`)
          .join(", ");
        line("pending jobs", `${pending}${detail ? ` (${detail})` : ""}`);
      }
      if (dir && !setting(process.env, "MEMCTX_DATABASE_URL")) line("disk", await diskLine(dir));
      for (const ns of namespaces.slice(0, NAMESPACES_SHOWN)) {
        process.stdout.write(
          `  ${ns.namespace}: ${plural(ns.documentCount, "document")}, ${plural(ns.memoryCount, "memory", "memories")}\n`,
        );
      }
      if (namespaces.length > NAMESPACES_SHOWN) {
        process.stdout.write(`  … and ${namespaces.length - NAMESPACES_SHOWN} more\n`);
      }
      return 0;
    } finally {
      await backend.close();
    }
  },
};
