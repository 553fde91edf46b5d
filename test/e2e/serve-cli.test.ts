import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";

const run = promisify(execFile);
const children: ServeChild[] = [];
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  dir?.remove();
});

const memctx = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args], { cwd: ROOT });

const get = (url: string, key: string) =>
  fetch(`${url}/namespaces`, { headers: { authorization: `Bearer ${key}` } });

describe("memctx serve and memctx keys", () => {
  it("creates and prints a key on the first start only, and closes cleanly on SIGTERM", async () => {
    dir = tempDir();
    const first = await spawnServe(dir.path, { MEMCTX_API_KEY: "" });
    children.push(first);
    const out = first.stdout();
    expect(out).toContain(`data directory ${dir.path}`);
    const key = /^(mk_\S+)$/m.exec(out)?.[1];
    expect(key).toBeDefined();
    expect((await get(first.url, key!)).status).toBe(200);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain("SIGTERM, closing");

    const second = await spawnServe(dir.path, { MEMCTX_API_KEY: "" });
    children.push(second);
    expect(second.stdout()).not.toMatch(/^mk_/m);
    expect((await get(second.url, key!)).status).toBe(200);
  });

  it("registers MEMCTX_API_KEY for the local organization instead of creating one", async () => {
    dir = tempDir();
    const s = await spawnServe(dir.path);
    children.push(s);
    expect(s.stdout()).not.toMatch(/^mk_/m);
    expect((await get(s.url, TEST_KEY)).status).toBe(200);
  });

  it("says at start where the memory browser is, and the page is there", async () => {
    dir = tempDir();
    const s = await spawnServe(dir.path);
    children.push(s);
    const said = /^memctx serve: memory browser at (\S+) \(sign in with an API key of this server\)$/m.exec(
      s.stdout(),
    );
    expect(said?.[1]).toBe(`${s.url}/ui`);
    const page = await fetch(said![1]!);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
  });

  it("creates, lists and revokes keys; a revoked key gets 401", async () => {
    dir = tempDir();
    const s = await spawnServe(dir.path);
    children.push(s);
    const created = (await memctx("keys", "create", "--org", "acme", "--data-dir", dir.path)).stdout.trim();
    expect(created).toMatch(/^mk_/);
    expect((await get(s.url, created)).status).toBe(200);
    const listed = (await memctx("keys", "list", "--data-dir", dir.path)).stdout;
    expect(listed).toContain(`${created.slice(0, 11)}…  org=acme`);
    // The server's use of the key, written by the serve process, read by this one.
    expect(listed).toMatch(new RegExp(`${created.slice(0, 11)}….* last used \\d{4}-\\d\\d-\\d\\dT`));
    expect(listed).toContain("org=local");
    expect(listed).not.toContain(created);
    const revoked = (await memctx("keys", "revoke", created.slice(0, 11), "--data-dir", dir.path)).stdout;
    expect(revoked).toContain("revoked");
    expect((await get(s.url, created)).status).toBe(401);
    await expect(memctx("keys", "revoke", "mk_nothing", "--data-dir", dir.path)).rejects.toMatchObject({
      stderr: expect.stringContaining("no active key matches"),
    });
  });
});
