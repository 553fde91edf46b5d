import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { type Engine, type EngineOptions, openEngine } from "./index.js";
import { trimAfterBusySpells } from "./memory-trim.js";
import { trimConnection } from "./store/db.js";

export interface ServeOptions extends EngineOptions {
  port: number;
  host: string;
  /** Puts a handler in front of the engine's (memctx ui's one-time key exchange). */
  wrap?: (engineFetch: Engine["fetch"]) => Engine["fetch"];
}

export interface RunningServer {
  engine: Engine;
  /** http://host:port, with the port actually bound (port 0 picks a free one). */
  url: string;
  /** Stops accepting, ends open connections, stops the workers and closes the database. */
  close(): Promise<void>;
}

/** The engine on an HTTP socket (what `memctx serve` runs; tests start it in-process on port 0). */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const engine = await openEngine(opts);
  const server = createAdaptorServer({
    fetch: opts.wrap ? opts.wrap(engine.fetch) : engine.fetch,
    hostname: opts.host,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port, opts.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await engine.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  // The serving thread's heap, grown under a load, is given back once the load is over.
  const trimmer = trimAfterBusySpells({ onTrim: () => trimConnection(engine.context.db) });
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    engine,
    url: `http://${host}:${port}`,
    close: () => {
      closing ??= (async () => {
        trimmer.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server) server.closeAllConnections();
        });
        await engine.close();
      })();
      return closing;
    },
  };
}
