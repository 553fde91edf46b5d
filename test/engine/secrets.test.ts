import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { getConnectorRow } from "../../src/engine/store/connectors.js";
import { DATABASE_FILE } from "../../src/engine/store/db.js";
import { keyFromString, SECRET_KEY_FILE } from "../../src/engine/store/secrets.js";
import { ROOT, startTestServer, TEST_BACKEND, type TestServer, tempDir } from "../support/harness.js";

const TOKEN = "ghp_a-personal-token-nobody-may-read";
const saved = { ...process.env };
let dir: ReturnType<typeof tempDir>;
let server: TestServer | undefined;
afterEach(async () => {
  process.env = { ...saved };
  await server?.close();
  server = undefined;
  dir?.remove();
});

const mode = (path: string) => statSync(path).mode & 0o777;

async function connectorWithToken(s: TestServer): Promise<string> {
  const res = await s.call("POST", "/ns/team/connectors", {
    body: { provider: "github", config: { token: TOKEN, repositories: ["octo/repo"] } },
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return ((await res.json()) as { id: string }).id;
}

const rawRow = async (s: TestServer, id: string) =>
  (await s.engine.context.db.prepare("SELECT config, credentials FROM connectors WHERE id = $1").get(id)) as {
    config: string;
    credentials: string | null;
  };

/** Tests of the SQLite file itself: on PostgreSQL the data directory holds only the key. */
const itSqlite = it.skipIf(TEST_BACKEND === "postgres");

describe("data at rest", () => {
  itSqlite(
    "creates the data directory 0700 and the database, its WAL and SHM and the key file 0600 under umask 000",
    () => {
      dir = tempDir("memctx-modes-");
      const dataDir = join(dir.path, "new", "data");
      // A child process: the umask is per process, and workers of the test runner cannot set it.
      const script = `
      process.umask(0);
      const { openEngine } = await import(${JSON.stringify(join(ROOT, "src/engine/index.ts"))});
      const { sealSecret } = await import(${JSON.stringify(join(ROOT, "src/engine/store/secrets.ts"))});
      const { statSync, readdirSync } = await import("node:fs");
      const engine = await openEngine({ dataDir: ${JSON.stringify(dataDir)}, workers: 0, embedder: null, log: () => {} });
      await engine.createKey();
      sealSecret(engine.context.db, "test", "x");
      const modes = Object.fromEntries(readdirSync(${JSON.stringify(dataDir)}).map((f) => [f, (statSync(${JSON.stringify(dataDir)} + "/" + f).mode & 0o777).toString(8)]));
      modes["."] = (statSync(${JSON.stringify(dataDir)}).mode & 0o777).toString(8);
      console.log(JSON.stringify(modes));
      await engine.close();
    `;
      const env = { ...process.env };
      delete env.MEMCTX_SECRET_KEY;
      const out = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: ROOT,
        env,
        encoding: "utf8",
      });
      expect(out.status, out.stderr).toBe(0);
      const modes = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as Record<string, string>;
      expect(modes).toEqual({
        ".": "700",
        [DATABASE_FILE]: "600",
        [`${DATABASE_FILE}-wal`]: "600",
        [`${DATABASE_FILE}-shm`]: "600",
        [SECRET_KEY_FILE]: "600",
      });
    },
  );

  itSqlite("keeps connector secrets out of the database file, sealed with a key file beside it", async () => {
    delete process.env.MEMCTX_SECRET_KEY;
    dir = tempDir("memctx-secrets-");
    server = await startTestServer(dir.path, { workers: 0 });
    const id = await connectorWithToken(server);
    const raw = await rawRow(server, id);
    expect(raw.config).toMatch(/^enc:v1:/);
    expect(raw.config).not.toContain(TOKEN);
    expect(mode(join(dir.path, SECRET_KEY_FILE))).toBe(0o600);
    // The service reads it back; the API shows it redacted.
    expect(JSON.parse((await getConnectorRow(server.engine.context.db, id))!.config!)).toMatchObject({
      token: TOKEN,
    });
    const shown = await server.call("GET", `/ns/team/connectors/${id}`);
    expect(shown.status).toBe(200);
    expect(await shown.text()).not.toContain(TOKEN);
    // The whole file, WAL included, holds no copy of the token.
    await server.engine.context.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(join(dir.path, DATABASE_FILE)).includes(TOKEN)).toBe(false);
  });

  it("uses MEMCTX_SECRET_KEY when set, and a wrong key answers a clear error", async () => {
    dir = tempDir("memctx-secrets-env-");
    process.env.MEMCTX_SECRET_KEY = "correct horse battery staple";
    server = await startTestServer(dir.path, { workers: 0 });
    const id = await connectorWithToken(server);
    expect((await rawRow(server, id)).config).not.toContain(TOKEN);
    await server.close();

    process.env.MEMCTX_SECRET_KEY = "another key";
    server = await startTestServer(dir.path, { workers: 0 });
    const res = await server.call("GET", `/ns/team/connectors/${id}`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string; details: string };
    expect(body.error).toBe("Secret key mismatch");
    expect(body.details).toContain("MEMCTX_SECRET_KEY");
    await server.close();

    process.env.MEMCTX_SECRET_KEY = "correct horse battery staple";
    server = await startTestServer(dir.path, { workers: 0 });
    expect(JSON.parse((await getConnectorRow(server.engine.context.db, id))!.config!)).toMatchObject({
      token: TOKEN,
    });
  });

  it("reads secrets stored in plain text by an older memctx, and seals them at the next open", async () => {
    delete process.env.MEMCTX_SECRET_KEY;
    dir = tempDir("memctx-secrets-plain-");
    server = await startTestServer(dir.path, { workers: 0 });
    const id = await connectorWithToken(server);
    const plain = JSON.stringify({ token: TOKEN, repositories: ["octo/repo"] });
    const tokens = JSON.stringify({ accessToken: "at-plain", refreshToken: "rt-plain" });
    await server.engine.context.db
      .prepare("UPDATE connectors SET config = $1, credentials = $2 WHERE id = $3")
      .run(plain, tokens, id);
    expect(JSON.parse((await getConnectorRow(server.engine.context.db, id))!.config!)).toMatchObject({
      token: TOKEN,
    });
    await server.close();

    server = await startTestServer(dir.path, { workers: 0 });
    const raw = await rawRow(server, id);
    expect(raw.config).toMatch(/^enc:v1:/);
    expect(raw.credentials).toMatch(/^enc:v1:/);
    expect(raw.credentials).not.toContain("at-plain");
    const row = (await getConnectorRow(server.engine.context.db, id))!;
    expect(JSON.parse(row.credentials!)).toEqual({ accessToken: "at-plain", refreshToken: "rt-plain" });
  });

  it("takes a base64 key of 32 bytes as it is and hashes any other string", () => {
    const raw = Buffer.alloc(32, 7);
    expect(keyFromString(raw.toString("base64")).equals(raw)).toBe(true);
    expect(keyFromString("short").length).toBe(32);
    expect(keyFromString("short").equals(keyFromString("short"))).toBe(true);
    expect(keyFromString("short").equals(keyFromString("shorter"))).toBe(false);
  });
});
