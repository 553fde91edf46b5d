import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitHub } from "../../../src/engine/connectors/providers/github.js";
import { InputError } from "../../../src/engine/errors.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, syncContext, versionsOf } from "./helpers.js";

/** Git's blob sha: sha1("blob <size>\0<content>"). */
const blobSha = (content: string) =>
  createHash("sha1")
    .update(`blob ${Buffer.byteLength(content)}\0${content}`)
    .digest("hex");

const TOKEN = "gho_test_token";
let api: HttpServer;
let files: Map<string, Map<string, string>>; // repo -> path -> content

beforeEach(async () => {
  files = new Map([
    [
      "acme/handbook",
      new Map([
        ["README.md", "# Handbook\n\nHow we work."],
        ["docs/onboarding.mdx", "Welcome aboard."],
        ["docs/notes.txt", "Plain notes."],
        ["docs/spec.rst", "Spec\n====\n"],
        ["src/index.ts", "export {};"],
        ["logo.png", "PNG"],
      ]),
    ],
    ["acme/empty-docs", new Map([["CHANGELOG.md", "## 1.0.0"]])],
  ]);
  api = await startHttpServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return json(res, 401, { message: "Bad credentials" });
    if (req.headers.accept !== "application/vnd.github+json")
      return json(res, 415, { message: "bad accept" });
    const url = new URL(req.url ?? "/", api.url);
    const repoOf = (owner: string, name: string) => ({
      full_name: `${owner}/${name}`,
      default_branch: "main",
      html_url: `https://github.com/${owner}/${name}`,
    });
    if (url.pathname === "/user/repos") {
      const page = url.searchParams.get("page") ?? "1";
      if (page === "1") {
        return json(res, 200, [repoOf("acme", "handbook")], {
          link: `<${api.url}/user/repos?per_page=100&sort=full_name&page=2>; rel="next", <${api.url}/user/repos?page=2>; rel="last"`,
        });
      }
      return json(res, 200, [repoOf("acme", "empty-docs")]);
    }
    let m = /^\/repos\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (m)
      return files.has(`${m[1]}/${m[2]}`)
        ? json(res, 200, repoOf(m[1]!, m[2]!))
        : json(res, 404, { message: "Not Found" });
    m = /^\/repos\/([^/]+)\/([^/]+)\/git\/trees\/main$/.exec(url.pathname);
    if (m && url.searchParams.get("recursive") === "1") {
      const repo = files.get(`${m[1]}/${m[2]}`)!;
      const tree = [...repo].map(([path, content]) => ({
        path,
        mode: "100644",
        type: "blob",
        sha: blobSha(content),
        size: content.length,
      }));
      tree.push({ path: "docs", mode: "040000", type: "tree", sha: "d".repeat(40), size: 0 });
      tree.push({
        path: "huge.md",
        mode: "100644",
        type: "blob",
        sha: "f".repeat(40),
        size: 60 * 1024 * 1024,
      });
      return json(res, 200, { sha: "t".repeat(40), tree, truncated: false });
    }
    m = /^\/repos\/([^/]+)\/([^/]+)\/git\/blobs\/([0-9a-f]{40})$/.exec(url.pathname);
    if (m) {
      const content = [...files.get(`${m[1]}/${m[2]}`)!.values()].find((c) => blobSha(c) === m![3]);
      if (content === undefined) return json(res, 404, { message: "Not Found" });
      // GitHub wraps base64 at 60 characters.
      const b64 = Buffer.from(content)
        .toString("base64")
        .replace(/(.{60})/g, "$1\n");
      return json(res, 200, { sha: m[3], size: content.length, encoding: "base64", content: b64 });
    }
    json(res, 404, { message: "Not Found" });
  });
});
afterEach(() => api.close());

const github = createGitHub({ env: {} });
const blobRequests = () => api.requests.filter((r) => r.path.includes("/git/blobs/")).length;

describe("github provider", () => {
  it("syncs the Markdown and text files of the selected repositories as github_markdown documents", async () => {
    const items = await collect(
      github.sync(
        syncContext({
          config: { apiUrl: api.url },
          credentials: { accessToken: TOKEN },
          selection: { repositories: ["acme/handbook"] },
        }),
      ),
    );
    const docs = documentsOf(items);
    expect(docs.map((d) => d.externalId).sort()).toEqual([
      "acme/handbook/README.md",
      "acme/handbook/docs/notes.txt",
      "acme/handbook/docs/onboarding.mdx",
      "acme/handbook/docs/spec.rst",
    ]);
    const readme = docs.find((d) => d.externalId === "acme/handbook/README.md")!;
    expect(readme).toMatchObject({
      type: "github_markdown",
      content: "# Handbook\n\nHow we work.",
      title: "README.md",
      url: "https://github.com/acme/handbook/blob/main/README.md",
      version: blobSha("# Handbook\n\nHow we work."),
      metadata: { repository: "acme/handbook", path: "README.md", branch: "main" },
    });
    expect(items).toContainEqual({
      kind: "skipped",
      item: "acme/handbook:huge.md",
      reason: expect.stringContaining("larger than"),
    });
  });

  it("re-syncs by blob sha: unchanged files are not fetched, changed ones are, removed ones drop out", async () => {
    const ctx = {
      config: { apiUrl: api.url },
      credentials: { accessToken: TOKEN },
      selection: { repositories: ["acme/handbook"] },
    };
    const first = await collect(github.sync(syncContext(ctx)));
    expect(blobRequests()).toBe(4);
    const repo = files.get("acme/handbook")!;
    repo.set("README.md", "# Handbook\n\nHow we work, revised.");
    repo.delete("docs/spec.rst");

    const second = documentsOf(
      await collect(github.sync(syncContext({ ...ctx, previous: versionsOf(first) }))),
    );
    expect(blobRequests()).toBe(5);
    expect(second.map((d) => d.externalId).sort()).toEqual([
      "acme/handbook/README.md",
      "acme/handbook/docs/notes.txt",
      "acme/handbook/docs/onboarding.mdx",
    ]);
    expect(second.find((d) => d.externalId === "acme/handbook/README.md")!.content).toContain("revised");
    const unchanged = second.find((d) => d.externalId === "acme/handbook/docs/notes.txt")!;
    expect(unchanged.content).toBe("");
    expect(unchanged.version).toBe(versionsOf(first).get("acme/handbook/docs/notes.txt"));
  });

  it("lists every repository of the account across pages when nothing is selected, with a config token", async () => {
    const docs = documentsOf(
      await collect(github.sync(syncContext({ config: { apiUrl: api.url, token: TOKEN } }))),
    );
    expect(docs.map((d) => d.externalId)).toContain("acme/empty-docs/CHANGELOG.md");
    expect(docs).toHaveLength(5);
    expect(api.requests.some((r) => r.path.includes("page=2"))).toBe(true);
  });

  it("honours documentLimit and reports an inaccessible repository without failing the others", async () => {
    const items = await collect(
      github.sync(
        syncContext({
          config: { apiUrl: api.url },
          credentials: { accessToken: TOKEN },
          selection: { repositories: ["acme/gone", "acme/handbook"] },
          documentLimit: 2,
        }),
      ),
    );
    expect(documentsOf(items)).toHaveLength(2);
    expect(items[0]).toMatchObject({
      kind: "failed",
      item: "acme/gone",
      reason: expect.stringContaining("404"),
    });
  });

  it("rejects a malformed repository selection, naming the field", async () => {
    const run = collect(
      github.sync(syncContext({ config: { token: TOKEN }, selection: { repositories: ["not a repo"] } })),
    );
    await expect(run).rejects.toThrow(InputError);
    await expect(
      collect(github.sync(syncContext({ config: { token: TOKEN }, selection: { repositories: ["x"] } }))),
    ).rejects.toThrow(/selection\.repositories/);
  });
});
