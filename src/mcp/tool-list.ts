/**
 * The tools/list answer, kept lean: every model pays for it on every turn. The schemas come from
 * the same zod schemas the handlers validate with, converted once per server, with these savings:
 * - a shape used several times in one tool (a filter leaf, a metadata value) is written once,
 *   as a definition;
 * - a filter leaf is written as one object naming every operator, not a union of four (the handler
 *   still checks which value goes with which operator, and its error names the rule);
 * - JSON Schema that says nothing is left out: `$schema`, the safe-integer bounds zod puts on every
 *   integer, `propertyNames: {type: string}`, `additionalProperties: {}`, and regular expressions too
 *   long for a model to read (dates), whose field descriptions say the format;
 * - a union of bare types is written as one type list (`{type: ["string", "null"]}`);
 * - an output schema says what comes back, not what a validator should enforce: no `required` and no
 *   `additionalProperties: false` (the server still checks its own results with the zod schemas).
 * Only constraints are dropped, never added, so structured results still validate against the output schemas.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { FilterLeaf, MetadataValue } from "../api/index.js";
import type { ToolDefinition } from "./tools/define.js";

/** A regular expression longer than this is a validator's business, not a model's. */
const PATTERN_MAX_CHARS = 80;

/** Shapes written once per tool, under these names. */
const shared = z.registry<{ id: string }>();
shared.add(MetadataValue, { id: "MetadataValue" });
shared.add(FilterLeaf, { id: "FilterLeaf" });

const leafOperators = FilterLeaf.options.flatMap((o) => o.shape.operator.options);

/** One filter leaf, for a model: which fields, which operators, which kinds of value. */
const LEAF_FOR_MODELS = {
  type: "object",
  properties: {
    field: { type: "string" },
    operator: { type: "string", enum: leafOperators },
    value: { type: ["string", "number", "boolean"] },
    caseSensitive: { type: "boolean" },
  },
  required: ["field", "operator", "value"],
  additionalProperties: false,
};

/** A keyword to drop, when its value says so. */
type Rule = [string, (v: unknown) => boolean];

const SAYS_NOTHING: Rule[] = [
  ["$schema", () => true],
  ["minimum", (v) => v === Number.MIN_SAFE_INTEGER],
  ["maximum", (v) => v === Number.MAX_SAFE_INTEGER],
  ["propertyNames", (v) => JSON.stringify(v) === '{"type":"string"}'],
  ["additionalProperties", (v) => JSON.stringify(v) === "{}"],
  ["pattern", (v) => typeof v === "string" && v.length > PATTERN_MAX_CHARS],
];

/** What an output schema leaves to the server's own check of its results. */
const ENFORCES_ONLY: Rule[] = [
  ["required", () => true],
  ["additionalProperties", (v) => v === false],
];

function lean(o: unknown, rules: Rule[]): unknown {
  if (Array.isArray(o)) return o.map((v) => lean(v, rules));
  if (!o || typeof o !== "object") return o;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (rules.some(([key, drop]) => key === k && drop(v))) continue;
    // `properties` holds names, not keywords: a field called `required` stays.
    out[k] = k === "properties" ? leanEach(v as Record<string, unknown>, rules) : lean(v, rules);
  }
  return mergeBareTypes(out);
}

function leanEach(props: Record<string, unknown>, rules: Rule[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(props).map(([name, v]) => [name, lean(v, rules)]));
}

/** `{anyOf: [{type: "string"}, {type: "null"}]}` -> `{type: ["string", "null"]}`: the same values, fewer bytes. */
function mergeBareTypes(o: Record<string, unknown>): Record<string, unknown> {
  const members = o.anyOf;
  if (!Array.isArray(members) || members.length < 2) return o;
  const bare = (m: unknown) => !!m && typeof m === "object" && Object.keys(m).length === 1 && "type" in m;
  if (!members.every(bare)) return o;
  const { anyOf: _, ...rest } = o;
  const types = members.flatMap((m) => (m as { type: string | string[] }).type);
  return { type: [...new Set(types)], ...rest };
}

/** A tool's schema as tools/list shows it (JSON Schema draft-07, as the SDK 1.x writes it). */
export function toolJsonSchema(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  const js = z.toJSONSchema(schema, {
    target: "draft-7",
    io,
    metadata: shared,
    unrepresentable: "any",
    override: (ctx) => {
      // `metadata` above replaces the global registry, where .describe() keeps descriptions.
      const description = z.globalRegistry.get(ctx.zodSchema)?.description;
      if (description) ctx.jsonSchema.description = description;
      if (ctx.zodSchema !== FilterLeaf) return;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
      Object.assign(ctx.jsonSchema, structuredClone(LEAF_FOR_MODELS));
    },
  });
  return lean(
    js,
    io === "output" ? [...SAYS_NOTHING, ...ENFORCES_ONLY] : SAYS_NOTHING,
  ) as Tool["inputSchema"];
}

export function toolListEntry(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolJsonSchema(tool.inputSchema, "input"),
    outputSchema: toolJsonSchema(tool.outputSchema, "output") as Tool["outputSchema"],
    annotations: tool.annotations,
  };
}

/**
 * The entries of the built-in tools, by name, converted by the build from these same tools
 * (scripts/bundle-cli.mjs) and inlined in the bundled command, whose cold start the conversion of
 * twelve schemas slowed. Not defined in tsc's build or from the sources: there they are converted here.
 */
declare const MEMCTX_TOOL_LIST: string | undefined;
const prebuilt: Record<string, Tool> | undefined =
  typeof MEMCTX_TOOL_LIST === "undefined" ? undefined : JSON.parse(MEMCTX_TOOL_LIST);

/** Converted once per process: every HTTP session lists the same tools. */
const converted = new WeakMap<ToolDefinition, Tool>();

function listed(tool: ToolDefinition): Tool {
  let entry = converted.get(tool);
  if (!entry) {
    entry = prebuilt?.[tool.name] ?? toolListEntry(tool);
    converted.set(tool, entry);
  }
  return entry;
}

/**
 * Answers tools/list with the lean schemas instead of the SDK's own conversion. Called after the
 * tools are registered (registering installs the SDK's handler, which this one replaces).
 */
export function serveLeanToolList(server: McpServer, tools: readonly ToolDefinition[]): void {
  const list = tools.map(listed);
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list }));
}
