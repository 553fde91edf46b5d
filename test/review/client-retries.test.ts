/**
 * Security review: the client repeats a request only when repeating it cannot do more than the
 * caller asked. Forgetting by meaning (not a dry run) forgets whatever matches at the time: a
 * repeat after a lost answer can forget memories that the first attempt left alone (for example
 * past its limit of matches), so it is not retried; a dry run is.
 */
import { describe, expect, it } from "vitest";
import { InternalServerError } from "../../src/client/index.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

// Default maxRetries (2); a tiny backoff base keeps the tests fast.
const { server, client } = scriptedServerPerFile({ retryBaseMs: 1 });

const forgetResponse = { count: 0, matches: [], errors: [] };

describe("retries of forget by meaning", () => {
  it("does not repeat a forget by meaning that changes memories", async () => {
    server.fallback = { status: 503, json: { error: "unavailable" } };
    await expect(
      client.ns("alice").memories.forgetSemantic({ query: "old address", dryRun: false }),
    ).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(1);
  });

  it("repeats a dry run, which changes nothing", async () => {
    server.reply({ status: 503, json: { error: "unavailable" } }, { json: forgetResponse });
    const res = await client.ns("alice").memories.forgetSemantic({ query: "old address", dryRun: true });
    expect(res.count).toBe(0);
    expect(server.received).toHaveLength(2);
  });
});
