import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOCAL_KEY_FILE, openBackend, setting } from "../../src/cli/backend.js";
import { CliError } from "../../src/cli/cli-error.js";

describe("openBackend: where the API lives", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "memctx-backend-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("uses the API at MEMCTX_API_URL with MEMCTX_API_KEY", async () => {
    const b = await openBackend({ MEMCTX_API_URL: "http://127.0.0.1:9", MEMCTX_API_KEY: "mk_x" });
    expect(b).toMatchObject({ mode: "remote", apiUrl: "http://127.0.0.1:9", dataDir: undefined });
    await b.close();
  });

  it("needs MEMCTX_API_KEY with MEMCTX_API_URL, except when every HTTP caller brings a key", async () => {
    await expect(openBackend({ MEMCTX_API_URL: "http://127.0.0.1:9" })).rejects.toThrow(/MEMCTX_API_KEY/);
    const b = await openBackend({ MEMCTX_API_URL: "http://127.0.0.1:9" }, { perCallerKeys: true });
    expect(() => b.client).toThrow(CliError);
    await b.close();
  });

  it("refuses a MEMCTX_API_URL that is not a URL", async () => {
    await expect(openBackend({ MEMCTX_API_URL: "not a url", MEMCTX_API_KEY: "k" })).rejects.toThrow(
      /not a URL/,
    );
  });

  it("makes a new data directory 0700, as memctx serve does, whatever the umask", async () => {
    const fresh = join(dir, "new", "memctx");
    const umask = process.umask(0o022);
    try {
      const b = await openBackend({}, { dataDir: fresh });
      await b.close();
    } finally {
      process.umask(umask);
    }
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });

  it("runs the embedded engine otherwise, with one local key kept beside the database", async () => {
    const first = await openBackend({}, { dataDir: dir });
    expect(first).toMatchObject({ mode: "embedded", dataDir: dir, apiUrl: undefined });
    expect((await first.client.ns("default").documents.list()).documents).toEqual([]);
    await first.close();
    const key = readFileSync(join(dir, LOCAL_KEY_FILE), "utf8");
    expect(statSync(join(dir, LOCAL_KEY_FILE)).mode & 0o777).toBe(0o600);
    const second = await openBackend({}, { dataDir: dir });
    await second.client.ns("default").documents.list();
    await second.close();
    expect(readFileSync(join(dir, LOCAL_KEY_FILE), "utf8")).toBe(key);
  });

  it("treats blank values and unfilled bundle placeholders as unset", async () => {
    expect(setting({ A: "  " }, "A")).toBeUndefined();
    expect(setting({ A: `\${user_config.api_url}` }, "A")).toBeUndefined();
    expect(setting({ A: " x " }, "A")).toBe("x");
    const b = await openBackend(
      { MEMCTX_API_URL: `\${user_config.api_url}`, MEMCTX_API_KEY: "", MEMCTX_DATA_DIR: dir },
      {},
    );
    expect(b).toMatchObject({ mode: "embedded", dataDir: dir });
    await b.close();
  });
});
