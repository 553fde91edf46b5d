/**
 * The slot table (extract/slots.ts): what a clause sets, read from its verb first, then its words;
 * changes told as events; what is no longer so.
 */
import { describe, expect, it } from "vitest";
import { analyse } from "../../../../src/engine/memory/extract/nlp.js";
import { holdsOne, readSlot } from "../../../../src/engine/memory/extract/slots.js";

const read = (text: string, noLonger = false) => readSlot(analyse(text)[0]!.tokens, false, noLonger);

describe("the slot a clause sets", () => {
  it("is its verb's before any word's: a drink before work is a drink, not work", () => {
    expect(read("I drink a cortado every morning before work.")).toMatchObject({
      slot: "drink",
      value: "cortado",
      byVerb: true,
    });
    expect(read("I work as a nurse at the city hospital.")).toMatchObject({ slot: "work", byVerb: true });
    expect(read("We live in Foz, near the beach.")).toMatchObject({ slot: "home", value: "Foz" });
  });

  it("reads joining an organisation as work, and a club as nothing", () => {
    expect(read("I joined Northwind as a design lead.")).toMatchObject({
      slot: "work",
      value: "Northwind",
      change: "sets",
    });
    expect(read("I joined a book club.").slot).toBeNull();
    // What one works on now is no job, nor how or with whom one works.
    expect(read("I'm working on the Atlas migration.").slot).toBeNull();
    for (const how of ["I work from home.", "I work late on Tuesdays.", "I work with Rui on the mobile app."])
      expect(read(how).slot, how).toBeNull();
    expect(read("I work for the NHS.")).toMatchObject({ slot: "work", value: "NHS" });
    expect(read("I work remotely for Acme.")).toMatchObject({ slot: "work", value: "Acme" });
  });

  it("reads a role at an organisation as work or study, and an allergy to a pet as health", () => {
    expect(read("I'm a software engineer at Feedzai.")).toMatchObject({ slot: "work", value: "Feedzai" });
    expect(read("She's a nurse for the NHS.")).toMatchObject({ slot: "work", value: "NHS" });
    expect(read("I'm a student at Columbia.")).toMatchObject({ slot: "education", value: "Columbia" });
    expect(read("I'm a big fan of Radiohead.").slot).toBeNull();
    expect(read("I'm allergic to cats.").slot).toBe("health");
    expect(read("I'm lactose intolerant.").slot).toBe("health");
  });

  it("reads a habit as lasting, and a day's deed as not", () => {
    expect(read("Every Friday I play padel with Rui.").isStatic).toBe(true);
    expect(read("I usually go running along the river.").isStatic).toBe(true);
    expect(read("I played padel with Rui.").isStatic).toBe(false);
  });

  it("reads a weekday as a schedule, whatever else the clause names", () => {
    expect(read("The standup moved to Tuesdays.")).toMatchObject({ slot: "schedule", value: "Tuesdays" });
    expect(read("Our team standup is on Mondays at 9:30.")).toMatchObject({ slot: "schedule" });
    expect(read("The standup runs on Mondays.")).toMatchObject({ slot: "schedule", value: "Mondays" });
    // Someone who runs on a weekday has a habit, not the schedule one standup has.
    expect(read("I run 5k every Saturday morning at the park.")).toMatchObject({
      slot: null,
      isStatic: true,
    });
  });

  it("gives each kind of favourite and each liked thing a slot of its own", () => {
    expect(read("My favourite programming language is TypeScript.")).toMatchObject({
      slot: "favorite_language",
      value: "TypeScript",
    });
    expect(read("I love jazz.").slot).toBe("likes_jazz");
    expect(read("I hate early morning meetings.").slot).toBe("dislikes_meeting");
  });

  it("tells a change said outright from one only wished or denied", () => {
    expect(read("I sold the Clio last week.")).toMatchObject({ change: "ends", polarity: "no_longer" });
    expect(read("I bought an electric bike.")).toMatchObject({ slot: "vehicle", change: "sets" });
    // A change's slot is in its object: selling a car and cycling to work ends no job.
    expect(read("I sold the Yaris and now cycle to work.")).toMatchObject({ slot: null, change: "ends" });
    expect(read("I want to move to Lisbon.").change).toBeNull();
    expect(read("I will never quit my job.").change).toBeNull();
  });

  it("says what is no longer so, and keeps one value or several by the table", () => {
    expect(read("I no longer drink coffee.", true)).toMatchObject({ slot: "drink", polarity: "no_longer" });
    expect(holdsOne("home")).toBe(true);
    expect(holdsOne("likes_jazz")).toBe(true);
    expect(holdsOne("children")).toBe(false);
    expect(holdsOne("lead")).toBe(false);
  });
});
