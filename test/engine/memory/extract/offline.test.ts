import { describe, expect, it } from "vitest";
import { OfflineExtractor } from "../../../../src/engine/memory/extract/offline.js";
import type { ExtractedFact, ExtractionInput } from "../../../../src/engine/memory/extract/types.js";

const extractor = new OfflineExtractor();

function extract(input: Partial<ExtractionInput> & { text: string }): Promise<ExtractedFact[]> {
  return extractor.extract({ format: "conversation", documentDate: "2023-05-08T13:56:00", ...input });
}

function find(facts: ExtractedFact[], needle: string): ExtractedFact {
  const fact = facts.find((f) => f.memory.includes(needle));
  if (!fact) throw new Error(`no fact contains "${needle}" in ${JSON.stringify(facts.map((f) => f.memory))}`);
  return fact;
}

describe("offline extractor", () => {
  it("attributes first-person statements to the speaker", async () => {
    const facts = await extract({
      text: "Caroline: I moved to Berlin in 2021.\nMelanie: My son plays the violin.",
    });
    expect(find(facts, "Caroline moved to Berlin").subject).toBe("caroline");
    expect(find(facts, "Melanie's son plays the violin").subject).toBe("melanie's son");
    expect(facts.some((f) => /\b(I|my|me)\b/.test(f.memory))).toBe(false);
  });

  it("names the speaker as the subject of a statement that leaves it out", async () => {
    const facts = await extract({
      text: "Nate: Dyed my hair last week - come see!",
      documentDate: "2022-04-15",
    });
    expect(facts[0]).toMatchObject({ subject: "nate", eventDate: "2022-04-04" });
    expect(facts[0]?.memory).toMatch(
      /^Nate dyed their hair last week \(4-10 April 2022, the week before 15 April 2022\)/,
    );
  });

  it("resolves 'you' to the other speaker of a two-person conversation", async () => {
    const facts = await extract({ text: "Caroline: Hi!\nMelanie: You told me your sister lives in Denver." });
    expect(find(facts, "Caroline told Melanie Caroline's sister lives in Denver")).toBeDefined();
  });

  it("resolves relative dates against the document date", async () => {
    const facts = await extract({
      text: [
        "Caroline: I went to a LGBTQ support group yesterday.",
        "Melanie: I ran a charity race last Friday.",
        "Caroline: I gave a talk at a school last week.",
        "Melanie: My son broke his arm two days ago.",
        "Melanie: We're going camping next month.",
        "Caroline: I painted that lake sunrise last year.",
      ].join("\n"),
    });
    expect(find(facts, "support group yesterday (7 May 2023)").eventDate).toBe("2023-05-07");
    expect(find(facts, "charity race last Friday (5 May 2023, the Friday before 8 May 2023)").eventDate).toBe(
      "2023-05-05",
    );
    expect(
      find(facts, "talk at a school last week (1-7 May 2023, the week before 8 May 2023)").eventDate,
    ).toBe("2023-05-01");
    expect(find(facts, "broke his arm two days ago (6 May 2023)").eventDate).toBe("2023-05-06");
    expect(find(facts, "camping next month (June 2023)").eventDate).toBe("2023-06-01");
    expect(find(facts, "lake sunrise last year (2022)").eventDate).toBe("2022-01-01");
  });

  it("does not mistake durations for dates, and dates seasons", async () => {
    const facts = await extract({
      text: "Caroline: I've known these friends for 4 years.\nMelanie: We went camping at the beach last summer.",
      documentDate: "2023-06-09",
    });
    expect(find(facts, "Caroline has known these friends for 4 years (since about 2019)")).toBeDefined();
    // A duration never dates a fact in the future (it once became "in 2027").
    for (const f of facts) expect(f.eventDate === null || f.eventDate <= "2023-06-09").toBe(true);
    expect(find(facts, "went camping at the beach last summer (the summer of 2022)").eventDate).toBe(
      "2022-06-01",
    );
  });

  it("leaves dates alone when the document has none", async () => {
    const facts = await extract({
      text: "Caroline: I went to a support group yesterday.",
      documentDate: null,
    });
    expect(find(facts, "Caroline went to a support group yesterday").eventDate).toBeNull();
  });

  it("drops greetings, thanks, compliments and questions", async () => {
    const facts = await extract({
      text: [
        "Caroline: Hey Mel! Good to see you!",
        "Melanie: Thanks so much! How have you been?",
        "Caroline: That's awesome!",
        "Melanie: Did you go to the concert in the park?",
        "Caroline: You're so sweet, thanks!",
        "Melanie: Wow, congrats! Bye!",
      ].join("\n"),
    });
    expect(facts).toEqual([]);
  });

  it("keeps the fact and drops the chit-chat within one turn", async () => {
    const facts = await extract({
      text: "Caroline: Hey Melanie! Great to hear from you. I adopted a rescue dog named Oscar! What have you been up to?",
    });
    expect(facts.map((f) => f.memory)).toEqual(["Caroline adopted a rescue dog named Oscar (8 May 2023)."]);
  });

  it("tells static facts from dynamic ones in a realistic conversation", async () => {
    const facts = await extract({
      text: [
        "Caroline: I work as a nurse at the city hospital.",
        "Melanie: That's great! We went camping at the lake yesterday.",
        "Caroline: I love hiking in the mountains.",
        "Melanie: I'm going to run a marathon next month.",
        "Melanie: I have two kids and a dog named Max.",
        "Caroline: My favorite book is Dune.",
      ].join("\n"),
    });
    expect(find(facts, "Caroline works as a nurse")).toMatchObject({
      isStatic: true,
      attribute: "work",
      eventDate: null,
    });
    expect(find(facts, "Caroline loves hiking")).toMatchObject({ isStatic: true, attribute: "likes_hiking" });
    expect(find(facts, "Melanie has two kids and a dog named Max").isStatic).toBe(true);
    expect(find(facts, "favorite book is Dune")).toMatchObject({
      isStatic: true,
      attribute: "favorite_book",
    });
    expect(find(facts, "went camping at the lake yesterday (7 May 2023)").isStatic).toBe(false);
    expect(find(facts, "run a marathon next month (June 2023)").isStatic).toBe(false);
  });

  it("gives an update pair the same subject and attribute", async () => {
    const [berlin] = await extract({ text: "Caroline: I live in Berlin.", documentDate: "2023-01-10" });
    const [boston] = await extract({ text: "Caroline: I live in Boston now.", documentDate: "2024-03-02" });
    const [moved] = await extract({
      text: "Caroline: I moved to Boston last month.",
      documentDate: "2024-03-02",
    });
    expect(berlin).toMatchObject({
      memory: "Caroline lives in Berlin.",
      subject: "caroline",
      attribute: "home",
    });
    expect(boston).toMatchObject({
      memory: "Caroline lives in Boston now.",
      subject: "caroline",
      attribute: "home",
    });
    expect(moved).toMatchObject({
      memory: "Caroline moved to Boston last month (February 2024).",
      subject: "caroline",
      attribute: "home",
    });
  });

  it("names the user of plain-text notes from the namespace's context", async () => {
    const withContext = await extract({
      format: "plain",
      text: "I prefer tea over coffee.",
      supportingContext: "The user is Alice Chen, a data engineer in Leeds.",
    });
    expect(withContext[0]).toMatchObject({
      memory: "Alice Chen prefers tea over coffee.",
      subject: "alice chen",
    });
    const without = await extract({ format: "plain", text: "I prefer tea over coffee." });
    expect(without[0]?.memory).toBe("The user prefers tea over coffee.");
  });

  it("names the 'user' of a chat from the document's context and skips the assistant's turns", async () => {
    const facts = await extract({
      text: "user: I adopted a cat named Luna.\nassistant: Cats are great companions and need regular vet visits.",
      entityContext: "A chat with the user, whose name is Priya.",
    });
    expect(facts.map((f) => f.memory)).toEqual(["Priya adopted a cat named Luna (8 May 2023)."]);
  });

  it("keeps a minor statement when the organization's context says it matters", async () => {
    const text = "We finally migrated!";
    expect(await extract({ format: "plain", text })).toEqual([]);
    const facts = await extract({
      format: "plain",
      text,
      organizationalContext: "The team is migrating its services to Kubernetes.",
    });
    expect(facts.map((f) => f.memory)).toEqual(["The user and others finally migrated (8 May 2023)."]);
  });

  it("states a known fact again (relation detection merges it, with this text as one more source), once per text", async () => {
    const facts = await extract({
      text: "Caroline: I live in Berlin. I work at a bakery. I live in Berlin.",
      existing: [{ id: "m1", memory: "Caroline lives in Berlin." }],
    });
    expect(facts.map((f) => f.memory)).toEqual(["Caroline lives in Berlin.", "Caroline works at a bakery."]);
  });

  it("points each fact at its span in the text", async () => {
    const text = "Caroline: Hi!\nMelanie: I started pottery classes in March.";
    const [fact] = await extract({ text });
    expect(text.slice(fact!.source!.start, fact!.source!.end)).toBe("I started pottery classes in March.");
  });

  it("stops when aborted", async () => {
    await expect(
      extractor.extract(
        { text: "Caroline: I live in Berlin.", format: "conversation", documentDate: null },
        AbortSignal.abort(),
      ),
    ).rejects.toThrow();
  });

  it("makes two facts of two slots told in one sentence, each conjugated, and dates no habit", async () => {
    const facts = await extract({ text: "user: I live in Paris and I work as a nurse.\nassistant: Nice!" });
    expect(facts.map((f) => [f.memory, f.attribute])).toEqual([
      ["The user lives in Paris.", "home"],
      ["The user works as a nurse.", "work"],
    ]);
    // A compound subject stays plural.
    const [both] = await extract({
      text: "Caroline: Melanie and I go hiking every Sunday.\nMelanie: We do!",
    });
    // "every Sunday" is a habit: no date is made of it.
    expect(both!.memory).toMatch(/^Melanie and Caroline go hiking every Sunday\b/);
    expect(both!.memory).not.toMatch(/the Sunday before/);
  });

  describe("time said the way people say it", () => {
    // A Wednesday, 01:30 in the night.
    const at = "2023-06-14T01:30:00Z";
    const one = async (text: string, documentDate = at) => {
      const facts = await extract({ text, documentDate });
      expect(facts).toHaveLength(1);
      return facts[0]!;
    };

    it("keeps the speaker's words and puts the absolute date or range beside them", async () => {
      expect((await one("Kim: I baked bread last Sunday.")).memory).toBe(
        "Kim baked bread last Sunday (11 June 2023, the Sunday before 14 June 2023).",
      );
      const week = await one("Kim: I repainted the fence last week.");
      expect(week.memory).toBe(
        "Kim repainted the fence last week (5-11 June 2023, the week before 14 June 2023).",
      );
      expect(week.eventDate).toBe("2023-06-05");
      expect((await one("Kim: I sold the old bike a few days ago.")).memory).toBe(
        "Kim sold the old bike a few days before 14 June 2023.",
      );
      expect((await one("Kim: My nephew was born on the 11th.")).eventDate).toBe("2023-06-11");
      expect((await one("Kim: I visit the museum next weekend.", "2023-05-31")).memory).toMatch(
        /next weekend \(3-4 June 2023, the weekend after 31 May 2023\)/,
      );
    });

    it("dates 'last night' said after midnight the day before", async () => {
      const f = await one("Kim: We watched the fireworks last night.");
      expect(f.memory).toBe("Kim and others watched the fireworks last night (13 June 2023).");
      expect(f.eventDate).toBe("2023-06-13");
    });

    it("turns a duration into a start, never a future date", async () => {
      const f = await one("Kim: I have played the cello for three years now.");
      expect(f.memory).toContain("for three years now (since about 2020)");
      expect(f.eventDate === null || f.eventDate <= "2023-06-14").toBe(true);
      const g = await one("Kim: After 4 years I finally finished the quilt.");
      expect(g.memory).toContain("After 4 years (since about 2019)");
      // A duration that does not reach back to now starts nothing.
      const plan = await one("Kim: I am moving to Kyoto for two years.");
      expect(plan.memory).not.toMatch(/since/);
      expect(plan.eventDate === null || plan.eventDate <= "2023-06-14").toBe(true);
    });

    it("reads 'seven years now' and 'it's been two years' as durations from now, not 'had been'", async () => {
      expect((await one("Kim: Seven years now, and I still love the cello.")).memory).toContain(
        "Seven years now (since about 2016)",
      );
      expect((await one("Kim: It's been two years since I quit smoking.")).memory).toContain(
        "been two years (since about 2021)",
      );
      expect((await one("Kim: By then I had been two years in Oslo.")).memory).not.toMatch(/since/);
      expect((await one("Kim: I see my aunt twice a year.")).memory).not.toMatch(/since/);
    });

    it("counts weeks and weekends back from the document's day", async () => {
      const camp = await one("Kim: We went camping two weekends ago.");
      expect(camp.memory).toContain("two weekends ago (3-4 June 2023, two weekends before 14 June 2023)");
      expect(camp.eventDate).toBe("2023-06-03");
      expect((await one("Kim: I quit the choir the week before last.")).memory).toContain(
        "the week before last (around 31 May 2023, two weeks before 14 June 2023)",
      );
      expect((await one("Kim: I met the new vet a few weeks ago.")).memory).toContain(
        "a few weeks ago (around 24 May 2023, a few weeks before 14 June 2023)",
      );
      expect((await one("Kim: I sold the canoe the weekend before last.")).eventDate).toBe("2023-06-03");
    });

    it("reads a bare 'weekend' as both days, the one gone by unless the sentence plans ahead", async () => {
      // A Thursday: the nearest Saturday is ahead, but a told weekend is the one gone by.
      const quiet = await one("Kim: We had a quiet weekend at the lake.", "2023-06-15");
      expect(quiet.memory).toContain("weekend (10-11 June 2023, the weekend before 15 June 2023)");
      expect(quiet.eventDate).toBe("2023-06-10");
      const plan = await one("Kim: I'm going to paint the shed over the weekend.", "2023-06-15");
      expect(plan.memory).toContain("weekend (17-18 June 2023, the weekend after 15 June 2023)");
    });

    it("reads 'the other day' and 'Tues', and leaves 'the sun' and 'sat' alone", async () => {
      expect((await one("Kim: The other day I fixed the boat engine.")).eventDate).toBe("2023-06-11");
      expect((await one("Kim: On Tues I fixed the boat engine.")).memory).toBe(
        "On Tues (13 June 2023, the Tuesday before 14 June 2023) Kim fixed the boat engine.",
      );
      const sun = await one("Kim: I painted the sun over the harbour.");
      expect(sun.memory).not.toMatch(/Sunday|June 11/);
      expect(sun.eventDate).toBe("2023-06-14");
      expect((await one("Kim: I sat down with the harbour master.")).memory).not.toMatch(/Saturday/);
    });

    it("gives a month said without its year the year that 'last', 'next' or the tense points to", async () => {
      const rome = await one("Kim: I visited Rome last October.");
      expect(rome.memory).toBe("Kim visited Rome last October (October 2022).");
      expect(rome.eventDate).toBe("2022-10-01");
      const ski = await one("Kim: I went skiing in January.");
      expect(ski.memory).toBe("Kim went skiing in January 2023.");
      expect(ski.eventDate).toBe("2023-01-01");
      expect((await one("Kim: I'm flying to Lima in September.")).eventDate).toBe("2023-09-01");
      expect((await one("Kim: I bought a kayak in September.")).eventDate).toBe("2022-09-01");
      expect((await one("Kim: Next June I run the Oslo marathon.")).eventDate).toBe("2024-06-01");
      // A birth month says nothing of the year.
      expect((await one("Kim: My daughter was born in May.")).memory).not.toMatch(/May \d/);
    });

    it("reads a weekday and 'this weekend' without 'last' or 'next' by the tense", async () => {
      // The document's day is a Wednesday: the nearest Saturday is ahead, the one told is gone by.
      const run = await one("Kim: I ran a 5K on Saturday.");
      expect(run.memory).toBe("Kim ran a 5K on Saturday (10 June 2023, the Saturday before 14 June 2023).");
      expect(run.eventDate).toBe("2023-06-10");
      expect((await one("Kim: I'm running a 5K on Monday.")).eventDate).toBe("2023-06-19");
      expect((await one("Kim: I will see the dentist on Monday.")).eventDate).toBe("2023-06-19");
      const hike = await one("Kim: I went hiking this weekend.");
      expect(hike.memory).toContain("this weekend (10-11 June 2023, the weekend before 14 June 2023)");
      expect((await one("Kim: We're going camping this weekend.")).eventDate).toBe("2023-06-17");
    });

    it("dates a sentence by a year said alone, and not by the document's day", async () => {
      const porto = await one("Kim: I moved to Porto in 2019.");
      expect(porto.memory).toBe("Kim moved to Porto in 2019.");
      expect(porto.eventDate).toBe("2019-01-01");
      const alps = await one("Kim: I hiked the Alps in the summer of 2019.");
      expect(alps.memory).toBe("Kim hiked the Alps in the summer of 2019.");
      expect(alps.eventDate).toBe("2019-06-01");
      expect((await one("Kim: I went to a 1990s party.")).eventDate).toBe("2023-06-14");
    });

    it("dates holidays in the year the words and the tense point to", async () => {
      const skating = await one("Kim: We went skating at Christmas.");
      expect(skating.memory).toBe("Kim and others went skating at Christmas (25 December 2022).");
      expect(skating.eventDate).toBe("2022-12-25");
      expect((await one("Kim: I'm hosting a party for Halloween.")).memory).toContain(
        "for Halloween (31 October 2023)",
      );
      expect((await one("Kim: On Thanksgiving I roasted a turkey.", "2023-12-01")).memory).toContain(
        "On Thanksgiving (23 November 2023)",
      );
      expect((await one("Kim: Last Easter we painted eggs.")).memory).toContain("Last Easter (9 April 2023)");
      expect((await one("Kim: We went to the lake over Memorial Day weekend.")).memory).toContain(
        "Memorial Day weekend (29 May 2023)",
      );
    });

    it("reads 'back' as 'ago', 'in a few days' ahead, and seasons said without 'last' or 'next'", async () => {
      expect((await one("Kim: I sold the canoe a few weeks back.")).memory).toContain(
        "a few weeks back (around 24 May 2023, a few weeks before 14 June 2023)",
      );
      expect((await one("Kim: I met the new vet a few days back.")).memory).toContain(
        "a few days before 14 June 2023",
      );
      expect((await one("Kim: I quit smoking two years back.")).memory).toContain(
        "two years back (around 2021)",
      );
      expect((await one("Kim: We have not talked in a few days.")).memory).not.toMatch(/after/);
      expect((await one("Kim: I will start the new job in a few days.")).memory).toContain(
        "in a few days (a few days after 14 June 2023)",
      );
      expect((await one("Kim: We planted tomatoes this spring.")).memory).toContain(
        "this spring (the spring of 2023)",
      );
      expect((await one("Kim: I went to Crete in the summer.", "2023-03-10")).memory).toContain(
        "in the summer (the summer of 2022)",
      );
      expect((await one("Kim: I'm going to Crete in the summer.", "2023-03-10")).memory).toContain(
        "in the summer (the summer of 2023)",
      );
    });
  });

  describe("extraction that keeps the answer", () => {
    it("reads timestamped turns with the engine's turn parser and joins continuation lines", async () => {
      const facts = await extract({
        text: [
          "[2023-05-07 10:00] Caroline: I adopted a grey kitten named Pixel.",
          "[2023-05-07 10:01] Melanie: My brother Tom runs a bakery in Leeds.",
          "He bakes sourdough for the whole street.",
        ].join("\n"),
      });
      // Each turn is dated by its own timestamp (7 May), not by the document's date (8 May).
      expect(facts[0]?.memory).toBe("Caroline adopted a grey kitten named Pixel (7 May 2023).");
      expect(facts.map((f) => f.memory.replace(/ \(7 May 2023\)/, ""))).toEqual([
        "Caroline adopted a grey kitten named Pixel.",
        "Melanie's brother Tom runs a bakery in Leeds.",
        // Who Tom is to Melanie: a fact of hers (her family), apart from what he does.
        "Melanie's brother is Tom.",
        // Who Tom is, said with the fact about him: true on its own.
        "Tom, Melanie's brother, bakes sourdough for the whole street.",
      ]);
      // What Tom does is his, not a fact of Melanie's family.
      expect(facts[1]?.subject).toBe("tom");
      expect(facts[1]?.attribute).not.toBe("family");
      expect(facts[2]).toMatchObject({ subject: "melanie", attribute: "family", value: "Tom" });
      expect(facts[3]?.subject).toBe("tom");
      expect(facts.every((f) => !f.memory.includes("["))).toBe(true);
    });

    it("resolves she/he to the person named last, and gives the fact that person as subject", async () => {
      const facts = await extract({ text: "Ola: My friend Alice moved in March. She lives in Berlin now." });
      expect(find(facts, "Alice, Ola's friend, lives in Berlin now")).toMatchObject({
        subject: "alice",
        subjectKind: "person",
      });
    });

    it("never reads she/he as the listener, nor a capitalised first word as a person", async () => {
      const facts = await extract({
        text: [
          "Ravi: Lena, how is the new flat?",
          "Lena: Great! My landlord is kind. She fixed the boiler in a day.",
          "Ravi: Puppies are a lot of work. He chewed my shoes again.",
        ].join("\n"),
      });
      // Between two people the listener is "you": "She" here is the landlord, not Ravi.
      const boiler = find(facts, "fixed the boiler in a day");
      expect(boiler.memory).not.toMatch(/Ravi/);
      expect(boiler.subject).not.toBe("ravi");
      // "Puppies" opens a sentence and is written nowhere else with a capital: not someone's name.
      const shoes = find(facts, "chewed");
      expect(shoes.memory).not.toMatch(/Puppies|Lena/);
      expect(shoes.memory).toContain("Ravi's shoes");
      // A name the text writes mid-sentence is still a referent when it opens a later sentence.
      const named = await extract({
        text: "Ravi: I walked with Tomas today. Tomas runs marathons. He trains at dawn.",
      });
      expect(find(named, "Tomas trains at dawn")).toMatchObject({ subject: "tomas" });
    });

    it("dates a past-tense sentence by the day its turn named just before", async () => {
      const facts = await extract({
        text: [
          "Ines: Yesterday was wild! We repainted the whole boathouse. It was a long day for the crew. Now it looks brand new.",
          "I am tired. We are going sailing next week.",
          "Theo: I fixed my bike. Last week I went to Porto.",
        ].join("\n"),
        documentDate: "2024-03-14T09:00:00",
      });
      // The second sentence has no date of its own: it goes on about "yesterday".
      expect(find(facts, "repainted the whole boathouse")).toMatchObject({ eventDate: "2024-03-13" });
      expect(find(facts, "repainted the whole boathouse").memory).toContain("(13 March 2024)");
      expect(find(facts, "long day for the crew").eventDate).toBe("2024-03-13");
      // Present and future sentences are about now, not about the day named before.
      expect(find(facts, "looks brand new").eventDate).toBe("2024-03-14");
      expect(find(facts, "going sailing").eventDate).not.toBe("2024-03-13");
      // The day named in one turn does not carry into the next, nor backwards.
      expect(find(facts, "Theo fixed").eventDate).toBe("2024-03-14");
    });

    it("keeps what a person did or was with one noun or adjective, and still drops small talk", async () => {
      const facts = await extract({
        text: [
          "Theo: We made pizza! My niece visited. She seemed so sad.",
          "Ines: They were awestruck and humbled. That's so cool! Sounds great! I love it. I agree.",
        ].join("\n"),
      });
      const memories = facts.map((f) => f.memory).join(" | ");
      expect(memories).toContain("made pizza");
      expect(memories).toContain("seemed sad");
      expect(memories).toContain("awestruck and humbled");
      expect(memories).not.toMatch(/cool|Sounds great|loves it|agrees/);
    });

    it("dates a lasting attribute told in the past tense as an event, and keeps the present one a state", async () => {
      const facts = await extract({
        text: "Ruth: I lost my job at the cannery. We adopted a puppy. I live in Tromsø and I have two sons.",
        documentDate: "2024-03-14",
      });
      const lost = find(facts, "lost");
      expect(lost.memory).toBe("Ruth lost their job at the cannery (14 March 2024).");
      expect(lost).toMatchObject({ attribute: "work", isStatic: false, eventDate: "2024-03-14" });
      expect(find(facts, "puppy")).toMatchObject({
        attribute: "pet",
        isStatic: false,
        eventDate: "2024-03-14",
      });
      const home = find(facts, "Tromsø");
      expect(home).toMatchObject({ attribute: "home", isStatic: true, eventDate: null });
      expect(home.memory).not.toMatch(/2024/);
    });

    it("drops an intensifier but keeps it inside a hyphenated word", async () => {
      const facts = await extract({ text: "Ola: I had a not-so-great week at the really busy office." });
      expect(facts[0]?.memory).toContain("a not-so-great week at the busy office");
    });

    it("keeps numbers as written", async () => {
      const facts = await extract({ text: "Ola: I ran a 5K in 31 minutes and I swim at least once a week." });
      expect(facts[0]?.memory).toContain("a 5K in 31 minutes");
      expect(facts[0]?.memory).toContain("at least once a week");
      const shift = await extract({
        text: "Ola: I dance hip-hop and my gym is open 24/7 for night-shift workers.",
      });
      // Two facts about different subjects (Ola, her gym) are two memories.
      expect(shift[0]?.memory).toContain("hip-hop");
      expect(find(shift, "open 24/7 for night-shift workers").memory).not.toMatch(/July/);
    });

    it("makes an image caption a fact about the sharer, and never a memory of a media URL", async () => {
      const facts = await extract({
        text: [
          "Ola: Look at my garden! [image: a photo of tomato plants in a greenhouse] https://cdn.example.com/p/123.jpg",
          "Ben: [shares a picture of a red kayak on a lake]",
          "Ola: https://www.youtube.com/watch?v=abc123",
        ].join("\n"),
      });
      expect(find(facts, "Ola shared a photo of tomato plants in a greenhouse")).toMatchObject({
        subject: "ola",
        isStatic: false,
      });
      expect(find(facts, "Ben shared a picture of a red kayak on a lake").subject).toBe("ben");
      expect(facts.some((f) => /https?:|www\.|\.jpg|share\b/i.test(f.memory.replace(/shared/g, "")))).toBe(
        false,
      );
    });
  });
});

describe("offline extractor: the user's name", () => {
  it("is a fact of its own after a greeting, and who the user is stays a fact too", async () => {
    const facts = await extract({
      text: "user: Hi, I'm Marcus Chen, a nurse at St. Mary's Hospital in Leeds.\nuser: I'm Ana Ribeiro, nice to meet you.",
      format: "conversation",
    });
    const names = facts.filter((f) => f.attribute === "name").map((f) => f.value);
    expect(names).toEqual(["Marcus Chen", "Ana Ribeiro"]);
    expect(facts.map((f) => f.memory)).toContain(
      "The user is Marcus Chen, a nurse at St. Mary's Hospital in Leeds.",
    );
    // "nice to meet you" says nothing of who the user is.
    expect(facts.some((f) => /nice to meet/.test(f.memory))).toBe(false);
  });
});

describe("offline extractor: faithful memory", () => {
  const plain = (text: string, documentDate = "2026-03-15") =>
    extractor.extract({ text, format: "plain", documentDate });

  describe("corrections name what they replace", () => {
    const cases: { said: string; replaces: string[]; memory: RegExp; left?: RegExp }[] = [
      {
        said: "user: Actually I moved to Braga in 2025, not Porto anymore.",
        replaces: ["Porto"],
        memory: /^The user moved to Braga in 2025\.$/,
      },
      { said: "user: We switched from Slack to Teams at work.", replaces: ["Slack"], memory: /Teams/ },
      {
        said: "Priya: My brother doesn't live in Oslo anymore.",
        replaces: ["Oslo"],
        memory: /Priya's brother/,
      },
      {
        said: "user: Correction: the offsite is on 12 June, not 5 June.",
        replaces: ["5 June"],
        memory: /the offsite is on 12 June/,
        left: /Correction|5 June/,
      },
      {
        said: "user: I cancelled my Netflix subscription.",
        replaces: ["Netflix subscription"],
        memory: /cancelled/,
      },
      { said: "Sam: I gave up coffee in January.", replaces: ["coffee"], memory: /^Sam gave up coffee/ },
      {
        said: "user: I was wrong about the venue, the party is at Luigi's.",
        replaces: ["venue"],
        memory: /Luigi's/,
      },
      { said: "user: I'll take the train instead of the bus.", replaces: ["bus"], memory: /train/ },
      { said: "Omar: I'm no longer with Acme Corp.", replaces: ["Acme Corp"], memory: /no longer with Acme/ },
    ];
    for (const c of cases) {
      it(`reads "${c.said}"`, async () => {
        const facts = await extract({ text: c.said });
        const fact = facts.find((f) => c.memory.test(f.memory));
        expect(fact, JSON.stringify(facts.map((f) => f.memory))).toBeDefined();
        expect(fact!.corrects).toBe(true);
        expect(fact!.replaces).toEqual(c.replaces);
        if (c.left) expect(fact!.memory).not.toMatch(c.left);
      });
    }

    it("names no old value where nothing is corrected", async () => {
      const facts = await extract({
        text: [
          "user: I do not like horror movies.",
          "user: Actually, the concert last night was amazing.",
          "user: I'm not a morning person.",
          "user: We stopped at a cafe near the station.",
          "user: I won't quit on my dreams, and I never gave up painting.",
          "user: It's hard to think he's not here with us anymore, after ten years in our family.",
        ].join("\n"),
      });
      expect(facts.length).toBeGreaterThan(2);
      for (const f of facts) expect(f.replaces ?? []).toEqual([]);
      // A "not ... anymore" that is the statement itself is kept whole.
      expect(find(facts, "not here with").memory).toMatch(/ten years/);
      expect(find(facts, "the concert last night").memory).toMatch(/^The user said the concert/);
    });
  });

  describe("who said what about whom", () => {
    it("resolves she/he to the person just named, a full name or one after a person noun", async () => {
      const facts = await extract({
        text: [
          "user: Lena Fischer joined our team in May. She prefers async code reviews.",
          "user: My landlord Mr Costa is retiring. He owns three buildings on Rua Augusta.",
        ].join("\n"),
      });
      expect(find(facts, "Lena Fischer prefers async code reviews")).toMatchObject({
        subject: "lena fischer",
        attribute: "likes_review",
      });
      expect(find(facts, "Mr Costa, the user's landlord, owns three buildings").subject).toBe("mr costa");
      const named = await extract({ text: "user: My colleague Priya Nair prefers tabs over spaces." });
      expect(find(named, "Priya Nair prefers tabs")).toMatchObject({
        subject: "priya nair",
        attribute: "likes_tab",
      });
    });

    it("never files an unresolved she/he as the speaker's own fact", async () => {
      const facts = await extract({ text: "user: She loves the new office in Graz." });
      const fact = find(facts, "loves the new office");
      expect(fact.subject).not.toBe("the user");
      expect(fact.isStatic).toBe(false);
      expect(fact.attribute).toBeNull();
    });

    it("makes two facts of one sentence about two people, and one of a list or a clause that points back", async () => {
      const split = await extract({
        text: [
          "user: I prefer dark roast coffee and my sister Maya lives in Lisbon.",
          "Jon: I teach chemistry but my wife Ana works at the port authority.",
        ].join("\n"),
      });
      expect(find(split, "The user prefers dark roast coffee.").subject).toBe("the user");
      expect(find(split, "The user's sister Maya lives in Lisbon")).toMatchObject({ subject: "maya" });
      expect(find(split, "The user's sister Maya lives in Lisbon").memory).not.toMatch(/coffee/);
      expect(find(split, "Jon teaches chemistry").memory).not.toMatch(/Ana/);
      expect(find(split, "Jon's wife Ana works at the port authority").memory).not.toMatch(/chemistry/);
      const whole = await extract({
        text: [
          "Mia: I have two kids and a dog named Max.",
          "Mia: We went to the lake and it was freezing.",
          "Mia: Caroline and I painted the fence.",
        ].join("\n"),
      });
      expect(whole.map((f) => f.memory)).toEqual([
        expect.stringContaining("two kids and a dog named Max"),
        expect.stringContaining("lake and it was freezing"),
        expect.stringContaining("Caroline and Mia painted the fence"),
      ]);
    });

    it("files who someone is to the user as the user's fact, and what more is said of them as theirs", async () => {
      const facts = await extract({
        text: [
          "user: My husband Daniel is a nurse.",
          "user: Marta is my sister.",
          "user: I went hiking with my brother Tom.",
          "user: My best friend Joana lives in Porto. She's a marine biologist at the Oceanário.",
        ].join("\n"),
      });
      // Daniel's job is his; that he is the user's husband is the user's.
      expect(find(facts, "husband Daniel is a nurse")).toMatchObject({
        subject: "daniel",
        subjectKind: "person",
      });
      expect(find(facts, "husband Daniel is a nurse").attribute).not.toBe("relationship");
      expect(find(facts, "The user's husband is Daniel.")).toMatchObject({
        subject: "the user",
        subjectKind: "user",
        attribute: "relationship",
        value: "Daniel",
        isStatic: true,
      });
      expect(find(facts, "Marta is the user's sister.")).toMatchObject({
        subject: "the user",
        attribute: "family",
        value: "Marta",
      });
      expect(find(facts, "The user's brother is Tom.")).toMatchObject({ attribute: "family", value: "Tom" });
      expect(find(facts, "went hiking").attribute).toBeNull();
      // A friend is no slot of the user's, but is someone: her job is hers.
      expect(find(facts, "is a marine biologist")).toMatchObject({
        memory: expect.stringMatching(/^Joana, the user's friend, is a marine biologist/),
        subject: "joana",
        subjectKind: "person",
        attribute: "work",
      });
      expect(facts.filter((f) => f.attribute === "relationship")).toHaveLength(1);
    });

    it("reads a role at an organisation as work, and a weekday a sentence opens with as no one", async () => {
      const facts = await extract({
        text: ["user: I'm a software engineer at Feedzai.", "user: Every Friday I play padel with Rui."].join(
          "\n",
        ),
      });
      expect(find(facts, "software engineer at Feedzai")).toMatchObject({
        subject: "the user",
        attribute: "work",
        value: "Feedzai",
        isStatic: true,
      });
      // A habit holds beyond the day it was told: lasting, undated.
      expect(find(facts, "plays padel")).toMatchObject({
        subject: "the user",
        isStatic: true,
        eventDate: null,
      });
    });

    it("reads an opening participle that names a thing as part of its name, not as the user's deed", async () => {
      const facts = await plain(
        "Shared MIME-info Database lists the known file types.\nVisited Lisbon with my sister in May.",
      );
      expect(find(facts, "Shared MIME-info Database lists").subject).toBeNull();
      expect(find(facts, "The user visited Lisbon").subject).toBe("the user");
    });

    it("reads a document's statements about things as about those things, not the user", async () => {
      const facts = await plain(
        [
          "# File Types",
          "## Sources",
          "Shared MIME-info Database lists the known file types. Closed segments are compressed with zstd.",
          "## History",
          "It replaced the old format in 2024. We publish a new list every spring.",
          "## Notes",
          "Scanned files keep their original names.",
        ].join("\n"),
      );
      expect(facts.map((f) => f.memory).join(" ")).not.toMatch(/the user/i);
      for (const f of facts) expect(f.subject).not.toBe("the user");
    });
  });

  describe("reference documents", () => {
    // A specification as a PDF gives it: running header and footer on every page, numbered
    // headings, a contents list, a bibliography, a numbered list of steps.
    const spec = (sections: number) => {
      const out = ["Orbit Sync Protocol Specification", "", "Contents", ""];
      for (let i = 1; i <= sections; i++) out.push(`${i}. Topic ${i} ........ ${i + 2}`);
      out.push("");
      for (let i = 1; i <= sections; i++) {
        out.push("Orbit Sync Protocol Specification    Draft 7", "");
        out.push(`${i}. Message Type ${String.fromCharCode(64 + (i % 26) + 1)}${i}`, "");
        out.push(
          `A type ${i} message carries at most ${i * 64} bytes of payload. Servers must answer a type ${i} message within ${i * 5} milliseconds. ` +
            `The sender sets the flag field to ${i} for this type. Receivers that do not know type ${i} drop it silently. ` +
            `This section is short. XML is mentioned in Section ${i}.1. See Section ${i + 1} for the details. The figure below shows the layout.`,
          "",
          "1. Open a channel",
          "2. Send the message",
          "",
          `- ${i + 2} -`,
          "",
        );
      }
      out.push(
        "References",
        "",
        "[1] R. Fielding. Architectural Styles. UC Irvine, 2000.",
        "[2] J. Postel. RFC 793, 1981.",
      );
      return out.join("\n");
    };

    it("leaves out contents, references, running headers, page numbers and talk about the document", async () => {
      const facts = await plain(spec(12));
      expect(facts.length).toBeGreaterThan(5);
      const all = facts.map((f) => f.memory).join("\n");
      expect(all).not.toMatch(
        /\.{4}|Draft 7|Fielding|Postel|RFC 793|mentioned in Section|See Section|figure below|section is short/i,
      );
      expect(all).not.toMatch(/^- \d+ -$/m);
    });

    it("leaves a table's rows to its passages: a row is no sentence", async () => {
      const facts = await plain(
        [
          "# Quotas",
          "## Storage",
          "Team Atlas keeps 400 GB of backups.",
          "## Limits per plan",
          "Starter plan seats        5",
          "Business plan seats       50",
          "## Support",
          "Support answers within one business day.",
        ].join("\n"),
      );
      const all = facts.map((f) => f.memory).join("\n");
      expect(all).not.toMatch(/plan seats/);
      expect(all).toMatch(/Team Atlas keeps 400 GB of backups/);
    });

    it("keeps the memories of a long document to a few dozen, growing slower than its length", async () => {
      const short = await plain(spec(12));
      const long = await plain(spec(120));
      expect(spec(120).length).toBeGreaterThan(55_000);
      expect(long.length).toBeLessThanOrEqual(80);
      expect(long.length / short.length).toBeLessThan(spec(120).length / spec(12).length / 2);
    });

    it("tells a short note's lines with the title line above them", async () => {
      const facts = await plain(
        "Checkout incident review\nOwner: Tomasz.\nRoot cause: missing idempotency key.",
      );
      expect(facts.map((f) => f.memory.replace(/ \(15 March 2026\)/, ""))).toEqual([
        "Checkout incident review: Owner: Tomasz.",
        "Checkout incident review: Root cause: missing idempotency key.",
      ]);
      // A note of one line, or one that opens with a sentence, has no title line.
      expect((await plain("I prefer green tea.\nMy office is in Leeds."))[0]?.memory).toBe(
        "The user prefers green tea.",
      );
    });

    it("tells each memory with the heading and title it needs, and keeps 'we' as the authors", async () => {
      const facts = await plain(
        [
          "# Falcon Build Service Handbook",
          "",
          "## Caching",
          "",
          "Entries expire after 14 days. We recommend a cache of at least 200 GB per runner.",
          "",
          "## Incident 42: stale artifacts",
          "",
          "Owner: Dana Whitfield.",
          "Root cause: a clock skew of 9 minutes on runner-7.",
          "",
          "## Overview",
          "",
          "Every build runs in a fresh container with 8 CPU cores.",
        ].join("\n"),
      );
      expect(find(facts, "Entries expire after 14 days").memory).toMatch(
        /Falcon Build Service Handbook.*Caching/,
      );
      expect(find(facts, "Owner: Dana Whitfield").memory).toMatch(/Incident 42: stale artifacts/);
      expect(find(facts, "clock skew").memory).toMatch(/Incident 42/);
      expect(find(facts, "fresh container").memory).toMatch(/^Falcon Build Service Handbook: /);
      expect(find(facts, "We recommend a cache").memory).not.toMatch(/the user/i);
      expect(facts.every((f) => !/\(15 March 2026\)/.test(f.memory))).toBe(true);
    });
  });
});
