/**
 * Supersession by subject and slot (memory/relations.ts over extract/slots.ts), through the API as
 * an agent logs turns: a new value of a one-valued slot retires the old, including a change told
 * as an event; "no longer" retires what it names; different slots and different people never
 * retire each other; several values of a many-valued slot add up; history stays readable.
 */
import { describe, expect, it } from "vitest";
import { serverPerFile, tellTurns } from "../../support/harness.js";

const { client } = serverPerFile({ workers: 1 });

/** Logs the user's turns (tellTurns) and answers with the namespace's latest memories. */
async function tell(ns: string, ...turns: string[]) {
  await tellTurns(client, ns, turns);
  const { memories } = await client.ns(ns).memories.list({ limit: 100 });
  return memories.map((m) => m.memory);
}

describe("supersession by subject and slot", () => {
  it("never lets a fact of another slot retire the user's job", async () => {
    const latest = await tell(
      "slots",
      "I work as a data engineer at Northwind.",
      "I drink two flat whites every morning.",
      "Right now I'm working on the Atlas migration.",
      "I work from home on Fridays.",
      "I sold my car and now cycle to work.",
      "I run 5k every Saturday morning.",
      "Every Sunday I play padel.",
    );
    expect(latest.some((m) => /data engineer at Northwind/.test(m))).toBe(true);
    expect(latest.some((m) => /flat whites/.test(m))).toBe(true);
    // Two weekly habits of the user's: neither is a schedule the other replaces.
    expect(latest.some((m) => /runs 5k every Saturday/.test(m))).toBe(true);
    expect(latest.some((m) => /padel/.test(m))).toBe(true);
  });

  it("reads changes told as events as the slot's new value: sold and bought, left and joined, moved", async () => {
    const latest = await tell(
      "changes",
      "I drive a 2015 Renault Clio.",
      "I work as a product designer at Lumen Labs.",
      "I live in Porto.",
      "I sold the Clio and bought an electric bike.",
      "I left Lumen Labs and joined Northwind as a design lead.",
      "I moved to Braga.",
    );
    const said = latest.join("\n");
    expect(said).toMatch(/bought an electric bike/);
    expect(said).toMatch(/joined Northwind as a design lead/);
    expect(said).toMatch(/moved to Braga/);
    expect(said).not.toMatch(/drives a 2015 Renault Clio|product designer at Lumen Labs|lives in Porto/);
  });

  it("retires every value a one-valued slot held, and keeps the history readable", async () => {
    const ns = client.ns("drink");
    const latest = await tell(
      "drink",
      "I drink a cortado every morning.",
      "I no longer drink coffee; I switched to green tea.",
    );
    expect(latest.join("\n")).not.toMatch(/cortado/);
    const tea = (await ns.memories.list({ limit: 100 })).memories.find((m) => /green tea/.test(m.memory))!;
    const read = await ns.memories.get(tea.id, { include: ["related"] });
    const earlier = read.included?.related?.parents.map((m) => m.memory).join("\n") ?? "";
    expect(earlier).toMatch(/no longer drinks coffee/);
    // The cortado, retired by the same new value, is still a memory (not latest).
    const all = await ns.memories.list({ limit: 100 }, { include: { forgotten: true } });
    const cortado = all.memories.find((m) => /cortado/.test(m.memory));
    expect(cortado?.isLatest).toBe(false);
  });

  it("lets 'no longer' retire only what it names, and a recurring thing's new day its old one", async () => {
    const latest = await tell(
      "languages",
      "My favourite language is Python.",
      "I'm learning Rust.",
      "I'm no longer learning Rust.",
      "Our team demo is on Mondays.",
      "The demo moved to Tuesdays.",
    );
    const said = latest.join("\n");
    expect(said).toMatch(/favourite language is Python/);
    expect(said).not.toMatch(/is learning Rust/);
    expect(said).toMatch(/Tuesdays/);
    expect(said).not.toMatch(/on Mondays/);
  });

  it("says a fact again with the value a correction gives it, as the fact's next version", async () => {
    // Each turn is appended on its own: the corrected fact is a known memory, not this text's.
    const latest = await tell(
      "meant",
      "Our team retro is on Thursdays at 4pm.",
      "I drive a blue Skoda.",
      "Sorry, I meant Fridays, not Thursdays.",
    );
    const said = latest.join("\n");
    expect(said).toMatch(/retro is on Fridays at 4pm/);
    expect(said).not.toMatch(/Thursdays/);
    expect(said).not.toMatch(/The user said Fridays/);
    // The car is no part of the correction.
    expect(said).toMatch(/blue Skoda/);
    const { memories } = await client.ns("meant").memories.list({ limit: 100 });
    const friday = memories.find((m) => /Fridays/.test(m.memory))!;
    expect(friday.version).toBe(2);
    const parent = await client.ns("meant").memories.get(friday.parentMemoryId!);
    expect(parent.memory).toMatch(/retro is on Thursdays at 4pm/);
  });

  it("adds up several values of a many-valued slot, and keeps people's own values apart", async () => {
    const latest = await tell(
      "family",
      "We have a son, Tomás.",
      "We also have a daughter, Rita.",
      "My sister lives in Berlin.",
      "I live in Lisbon.",
    );
    const said = latest.join("\n");
    expect(said).toMatch(/son, Tomás/);
    expect(said).toMatch(/daughter, Rita/);
    expect(said).toMatch(/sister lives in Berlin/);
    expect(said).toMatch(/lives in Lisbon/);
  });
});
