/**
 * Questions about the user (search/person.ts weighTheUsers) and about when something recurs
 * (search/when.ts boostStatedTimes), through the API: "where do I work?" is answered by the user's
 * own job before a sister's, "what do I drink?" by the drink the user switched to, though it
 * shares no word with the question, and "when does the pipeline run?" by the sentence that says.
 */
import { describe, expect, it } from "vitest";
import { asksAboutTheUser } from "../../../src/engine/search/person.js";
import { serverPerFile, tellTurns } from "../../support/harness.js";

const { client } = serverPerFile({ workers: 1 });

const tell = (ns: string, ...turns: string[]) => tellTurns(client, ns, turns);

const first = async (ns: string, query: string, searchMode: "memories" | "hybrid" = "memories") => {
  const { results } = await client.ns(ns).search({ query, searchMode, limit: 3 });
  return results.map((r) => ("memory" in r ? r.memory : r.chunk));
};

describe("questions about the user", () => {
  it("tells a question about the user from one about someone of theirs", () => {
    expect(asksAboutTheUser(["where", "do", "i", "work"])).toBe(true);
    expect(asksAboutTheUser(["what", "is", "my", "job"])).toBe(true);
    expect(asksAboutTheUser(["where", "does", "my", "sister", "work"])).toBe(false);
    expect(asksAboutTheUser(["where", "does", "rui", "work"])).toBe(false);
  });

  it("answers with the user's own facts first, and someone's with theirs", async () => {
    await tell(
      "whose",
      "I joined Northwind as a design lead.",
      "My sister Inês lives in Berlin and works as an architect.",
      "I drink a cortado every morning before work.",
      "I no longer drink coffee; I switched to green tea.",
      "I hate early morning meetings.",
    );
    expect((await first("whose", "Where do I work?"))[0]).toMatch(/Northwind/);
    expect((await first("whose", "Where does my sister work?"))[0]).toMatch(/Inês works as an architect/);
    expect((await first("whose", "What do I drink in the morning?"))[0]).toMatch(/green tea/);
  });

  it("answers when something recurs with the sentence that states the time", async () => {
    const readme = [
      "# Atlas",
      "",
      "Atlas is the batch pipeline that moves Northwind's sales exports into the analytics warehouse.",
      "It is owned by the Data Platform team.",
      "",
      "## Overview",
      "",
      "Every night at 02:00 UTC the `ingest_sales` DAG picks up the partner files and loads them into the `raw.sales` tables.",
      "",
      "## Runtime",
      "",
      "Atlas runs on Dagster 1.7 on Kubernetes, with its storage in Snowflake.",
    ].join("\n");
    await client.ns("when").documents.add({ id: "readme", content: readme, dreaming: "instant" });
    await client.ns("when").documents.waitFor("readme", { until: "memories" });
    const answers = await first("when", "When does the Atlas pipeline run?", "hybrid");
    expect(answers.slice(0, 2).join(" ")).toMatch(/02:00 UTC/);
  });
});
