import { z } from "zod";
import { ErrorResponse } from "./common.js";
import { type Endpoint, endpoints } from "./endpoints.js";

const schema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any", cycles: "ref", reused: "inline" });

function parameters(e: Endpoint) {
  const out: object[] = [];
  for (const [where, s] of [
    ["path", e.params],
    ["query", e.query],
  ] as const) {
    if (!s) continue;
    const js = schema(s, "input") as { properties?: Record<string, object>; required?: string[] };
    for (const [name, p] of Object.entries(js.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === "path" || (js.required ?? []).includes(name),
        schema: p,
      });
    }
  }
  return out;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
});

/** The OpenAPI 3.1 document of the v5 API, generated from the same schemas the code uses. */
export function openApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, object>> = {};
  for (const [operationId, e] of Object.entries(endpoints) as [string, Endpoint][]) {
    const op: Record<string, unknown> = {
      operationId,
      tags: [e.tag],
      summary: e.summary,
      parameters: parameters(e),
      responses: {
        [String(e.status ?? 200)]: {
          description: "Success",
          content: { "application/json": { schema: schema(e.response, "output") } },
        },
        "400": errorResponse("Invalid request: details names the field and the rule"),
        "401": errorResponse("Missing or invalid API key"),
        "404": errorResponse("Not found in this namespace"),
        "413": errorResponse("Request body too large"),
        "429": errorResponse("Rate limited; see Retry-After"),
      },
      security: [{ bearer: [] }],
    };
    if (e.body) {
      op.requestBody = {
        required: true,
        content: { "application/json": { schema: schema(e.body, "input") } },
      };
    }
    paths[e.path] ??= {};
    paths[e.path]![e.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Memory and Context Service API", version: "5.0.0" },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { ErrorResponse: schema(ErrorResponse, "output") },
    },
  };
}
