import { describe, expect, it } from "vitest";
import {
  isAboutSomeoneElse,
  otherPeople,
  type SubjectRow,
  userSubjects,
} from "../../../src/engine/memory/whose.js";

const user = userSubjects({ supportingContext: null, organizationalContext: null });

/** Whether the profile leaves each row out, the rows read together as the profile reads them. */
function leftOut(rows: SubjectRow[], who = user): boolean[] {
  const others = otherPeople(rows, who);
  return rows.map((r) => isAboutSomeoneElse(r, who, others));
}

describe("whose a memory is, for the user's profile", () => {
  it("keeps the user's own facts and things of the user's", () => {
    expect(
      leftOut([
        { memory: "The user prefers dark roast coffee.", subject: "the user" },
        { memory: "The user's car is a red Skoda.", subject: "the user's car" },
        { memory: "The user's dentist appointment is at 5 pm.", subject: "the user's appointment" },
        { memory: "The build server runs on Fridays.", subject: "build server" },
      ]),
    ).toEqual([false, false, false, false]);
  });

  it("leaves out someone of the user's, named or not, however the relation is written", () => {
    expect(
      leftOut([
        { memory: "The user's colleague Lena Fischer prefers async code reviews.", subject: "lena fischer" },
        { memory: "Priya Raman, the user's CTO, prefers Go over Rust.", subject: "priya raman" },
        { memory: "Jonas (a teammate of the user) loves early stand-ups.", subject: "jonas" },
        { memory: "The user's husband enjoys hiking.", subject: "the user's husband" },
        { memory: "The user's daughters like horse riding.", subject: "the user's daughter" },
        { memory: "Caroline's sister loves pottery.", subject: "caroline's sister" },
        { memory: "The user's dog Rex loves the beach.", subject: "rex" },
      ]),
    ).toEqual([true, true, true, true, true, true, true]);
  });

  it("knows a person introduced once in every memory about them", () => {
    expect(
      leftOut([
        { memory: "Lena Fischer prefers async code reviews.", subject: "lena fischer" },
        { memory: "The user's manager Lena Fischer moved to Berlin.", subject: "lena fischer" },
        { memory: "Tom Becker loves trail running.", subject: "tom becker" },
      ]),
    ).toEqual([true, true, false]);
  });

  it("leaves out an unresolved she or he, and a name the user speaks of in their own turns", () => {
    expect(
      leftOut([
        { memory: "She prefers async code reviews.", subject: null },
        {
          memory: "The user said Lena Fischer prefers async code reviews.",
          subject: "lena fischer",
          speaker: "user",
        },
        { memory: "The user said the deadline moved to Friday.", subject: "deadline", speaker: "user" },
        { memory: "The user's car needs new tyres.", subject: "the user's car", speaker: "user" },
      ]),
    ).toEqual([true, true, false, false]);
  });

  it("keeps a bare name, which may be the user's own, and whoever the context says the user is", () => {
    const alice = userSubjects({
      supportingContext: "The user is Alice Chen, a designer.",
      organizationalContext: null,
    });
    expect(alice.has("alice chen")).toBe(true);
    expect(
      leftOut(
        [
          { memory: "Alice prefers window seats on flights.", subject: "alice" },
          { memory: "Alice Chen said Mara prefers tea.", subject: "mara", speaker: "alice chen" },
          { memory: "Alice Chen's sister Mara prefers tea.", subject: "mara" },
          { memory: "Alice Chen loves jazz.", subject: "alice chen", speaker: "alice chen" },
        ],
        alice,
      ),
    ).toEqual([false, true, true, false]);
  });

  it("does not take a relation noun the memory uses otherwise for one", () => {
    expect(
      leftOut([
        { memory: "Tom Becker loves his sister's cooking.", subject: "tom becker" },
        { memory: "Ana Ruiz, 34, works as a nurse.", subject: "ana ruiz" },
        { memory: "The user likes their doctor.", subject: "the user" },
      ]),
    ).toEqual([false, false, false]);
  });
});
