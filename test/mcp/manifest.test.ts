import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_REQUIRED } from "../../src/cli/node-requirement.js";
import { tools } from "../../src/mcp/tools/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const manifest = JSON.parse(readFileSync(resolve(ROOT, "manifest.json"), "utf8"));
const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8"));

describe("manifest.json (the MCPB bundle manifest)", () => {
  it("is manifest version 0.3 with the package's name and version", () => {
    expect(manifest.manifest_version).toBe("0.3");
    expect(manifest.name).toBe(pkg.name);
    expect(manifest.version).toBe(pkg.version);
  });

  it("starts the built CLI's stdio server", () => {
    expect(manifest.server.entry_point).toBe(pkg.bin.memctx);
    expect(manifest.server.mcp_config.args).toEqual([`\${__dirname}/${pkg.bin.memctx}`, "mcp"]);
  });

  it("lists exactly the server's tools", () => {
    expect(manifest.tools.map((t: { name: string }) => t.name)).toEqual(tools.map((t) => t.name));
  });

  it("asks for the namespace, data directory, API URL and a sensitive key, and passes them as env", () => {
    const cfg = manifest.user_config;
    expect(Object.keys(cfg)).toEqual(["namespace", "data_dir", "api_url", "api_key"]);
    expect(cfg.api_key.sensitive).toBe(true);
    expect(cfg.data_dir.type).toBe("directory");
    expect(manifest.server.mcp_config.env).toEqual({
      MEMCTX_NAMESPACE: `\${user_config.namespace}`,
      MEMCTX_DATA_DIR: `\${user_config.data_dir}`,
      MEMCTX_API_URL: `\${user_config.api_url}`,
      MEMCTX_API_KEY: `\${user_config.api_key}`,
    });
  });

  it("has a homepage and a PNG icon that the package ships", () => {
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(pkg.files).toContain(manifest.icon.split("/")[0]);
    const png = readFileSync(resolve(ROOT, manifest.icon));
    expect(png.subarray(0, 8).toString("latin1")).toBe("\x89PNG\r\n\x1a\n");
  });

  it("requires the Node that memctx's check requires", () => {
    expect(manifest.compatibility.runtimes.node).toBe(`>=${NODE_REQUIRED.join(".")}.0`);
  });
});
