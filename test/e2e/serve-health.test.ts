/**
 * A real `memctx serve` answers /health and searches while it processes a multi-megabyte
 * document: extraction, chunking, indexing and dreaming run in processing threads, never on the
 * thread that answers requests. (Figures: bench/health-under-load.ts.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

let dir: ReturnType<typeof tempDir> | undefined;
let serve: ServeChild | undefined;
afterAll(async () => {
  if (serve) await stopChild(serve);
  dir?.remove();
});

/** About `bytes` of varied sentences, one fact each. */
function largeText(bytes: number): string {
  const names = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah"];
  const places = ["the harbour", "the garden", "the bakery", "the museum", "the station"];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const s = `${names[i % names.length]} visited ${places[(i * 7) % places.length]} on day ${i}.${i % 8 === 7 ? "\n\n" : " "}`;
    parts.push(s);
    size += s.length;
  }
  return parts.join("");
}

describe("memctx serve under a large document", () => {
  it("answers /health and a search in another namespace while the document is processed", async () => {
    dir = tempDir("memctx-health-");
    serve = await spawnServe(dir.path);
    const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
    const post = (path: string, body: unknown) =>
      fetch(`${serve!.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    await post("/ns/small/document", { content: "Dana lives in Lisbon." });

    const added = (await (
      await post("/ns/big/document", { content: largeText(3 * 1024 * 1024) })
    ).json()) as {
      id: string;
    };
    // Polled until the document is done: each round asks /health and a search in another namespace.
    let answeredWhileBusy = 0;
    await until(
      async () => {
        expect((await fetch(`${serve!.url}/health`)).status).toBe(200);
        expect((await post("/ns/small/search", { query: "Lisbon" })).status).toBe(200);
        const doc = (await (
          await fetch(`${serve!.url}/ns/big/document/${added.id}`, { headers })
        ).json()) as {
          system: { status: string; dreamingStatus: string };
        };
        if (doc.system.status === "failed") throw new Error("the large document failed");
        const done = doc.system.status === "done" && doc.system.dreamingStatus === "done";
        if (!done) answeredWhileBusy++;
        return done;
      },
      (done) => done,
      "the large document to be done",
    );
    // Answered again and again while the document was being worked on. (How fast: the bench.)
    expect(answeredWhileBusy).toBeGreaterThan(3);
  });
});
