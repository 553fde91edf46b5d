import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryBudget } from "../../../../src/engine/memory/extract/document.js";
import { LlmExtractor } from "../../../../src/engine/memory/extract/llm.js";
import { OpenAICompatibleChatModel } from "../../../../src/engine/models/chat.js";
import { chatReply, type FakeModelServer, startFakeModelServer } from "../../models/openai-server.js";

// A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire format.
let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.queue.length = 0;
});

function extractor(): LlmExtractor {
  return new LlmExtractor(
    new OpenAICompatibleChatModel({ baseUrl: server.baseUrl, model: "gpt-test", retries: 0, retryBaseMs: 1 }),
  );
}

const conversation = "Caroline: I went to a support group yesterday.\nMelanie: Wow! I live in Boston now.";

function messages(i = 0): { role: string; content: string }[] {
  return server.requests[i]!.body.messages as { role: string; content: string }[];
}

describe("LLM extractor", () => {
  it("sends the document date, the contexts, known memories and the text, and asks for structured JSON", async () => {
    server.queue.push(() => chatReply(JSON.stringify({ facts: [] })));
    await extractor().extract({
      text: conversation,
      format: "conversation",
      documentDate: "2023-05-08T13:56:00",
      supportingContext: "Caroline and Melanie are old friends.",
      entityContext: "A catch-up chat.",
      organizationalContext: "Remember where people live.",
      existing: [{ id: "m1", memory: "Melanie lives in Berlin." }],
    });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.body.model).toBe("gpt-test");
    expect(req.body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
    const user = messages().find((m) => m.role === "user")!.content;
    expect(user).toContain("Document date: 8 May 2023");
    expect(user).toContain("Caroline and Melanie are old friends.");
    expect(user).toContain("A catch-up chat.");
    expect(user).toContain("Remember where people live.");
    expect(user).toContain("- Melanie lives in Berlin.");
    expect(user).toContain(conversation);
    const system = messages().find((m) => m.role === "system")!.content;
    expect(system).toMatch(/absolute/);
    expect(system).toMatch(/attribute/);
  });

  it("returns the model's facts with normalized keys, known ones included (they are merged later), minus malformed dates", async () => {
    server.queue.push(() =>
      chatReply(
        JSON.stringify({
          facts: [
            {
              memory: "Caroline went to a support group on 7 May 2023.",
              isStatic: false,
              subject: "Caroline",
              attribute: null,
              subjectKind: null,
              value: null,
              polarity: "is",
              eventDate: "2023-05-07",
              isInference: false,
            },
            {
              memory: "Melanie lives in Boston.",
              isStatic: true,
              subject: "Melanie",
              attribute: "Home City",
              subjectKind: null,
              value: null,
              polarity: "is",
              eventDate: "May 2023",
              isInference: false,
            },
            {
              memory: "Melanie lives in Berlin.",
              isStatic: true,
              subject: "melanie",
              attribute: "home_city",
              subjectKind: null,
              value: null,
              polarity: "is",
              eventDate: null,
              isInference: false,
            },
          ],
        }),
      ),
    );
    const facts = await extractor().extract({
      text: conversation,
      format: "conversation",
      documentDate: "2023-05-08",
      existing: [{ id: "m1", memory: "Melanie lives in Berlin." }],
    });
    expect(facts).toEqual([
      {
        memory: "Caroline went to a support group on 7 May 2023.",
        isStatic: false,
        subject: "caroline",
        attribute: null,
        eventDate: "2023-05-07",
        isInference: false,
      },
      {
        memory: "Melanie lives in Boston.",
        isStatic: true,
        subject: "melanie",
        attribute: "home_city",
        eventDate: null,
        isInference: false,
      },
      {
        memory: "Melanie lives in Berlin.",
        isStatic: true,
        subject: "melanie",
        attribute: "home_city",
        eventDate: null,
        isInference: false,
      },
    ]);
  });

  it("asks again when the answer does not fit the schema, and fails clearly when it never does", async () => {
    const bad = () => chatReply(JSON.stringify({ facts: [{ memory: "" }] }));
    server.queue.push(bad, bad);
    await expect(
      extractor().extract({ text: conversation, format: "conversation", documentDate: null }),
    ).rejects.toThrow(/facts/);
    expect(server.requests).toHaveLength(2);
    expect(messages(0).find((m) => m.role === "user")!.content).toContain("Document date: unknown");
  });

  it("sends a long document in parts cut at line ends", async () => {
    const line = `Caroline: ${"I walked the dog in the park. ".repeat(20)}`;
    const text = Array.from({ length: 40 }, () => line).join("\n");
    for (let i = 0; i < 5; i++) server.queue.push(() => chatReply(JSON.stringify({ facts: [] })));
    await extractor().extract({ text, format: "conversation", documentDate: "2023-05-08" });
    expect(server.requests.length).toBeGreaterThan(1);
    for (let i = 0; i < server.requests.length; i++) {
      const user = messages(i).find((m) => m.role === "user")!.content;
      const doc = user.slice(user.indexOf("<<<\n") + 4, user.lastIndexOf("\n>>>"));
      expect(doc.split("\n").every((l) => l === line)).toBe(true);
    }
  });
});

describe("LLM extractor: faithful memory", () => {
  it("gives the model the offline extractor's rules, and reads a correction it names as superseding", async () => {
    server.queue.push(() =>
      chatReply(
        JSON.stringify({
          facts: [
            {
              memory: "The user lives in Braga (no longer Porto).",
              isStatic: true,
              subject: "the user",
              attribute: "home",
              subjectKind: null,
              value: null,
              polarity: "is",
              eventDate: null,
              isInference: false,
            },
            {
              memory: "Lena Fischer prefers async code reviews.",
              isStatic: true,
              subject: "Lena Fischer",
              attribute: "likes_async_reviews",
              subjectKind: null,
              value: null,
              polarity: "is",
              eventDate: null,
              isInference: false,
            },
          ],
        }),
      ),
    );
    const facts = await extractor().extract({
      text: "user: Actually I live in Braga now, not Porto anymore. Lena Fischer prefers async code reviews.",
      format: "conversation",
      documentDate: "2026-02-10",
      title: "Catch-up",
    });
    const system = messages()[0]!.content;
    for (const rule of [
      /not X anymore/,
      /\(no longer X\)/,
      /that person's/,
      /tables of contents/,
      /heading or the document's title/,
      /two facts/,
    ])
      expect(system).toMatch(rule);
    expect(messages()[1]!.content).toContain("Document title: Catch-up");
    expect(facts[0]).toMatchObject({ corrects: true, replaces: ["Porto"], attribute: "home" });
    expect(facts[1]).not.toHaveProperty("corrects");
    expect(facts[1]!.subject).toBe("lena fischer");
  });
});

describe("LLM extractor: a reference document", () => {
  it("keeps no more memories of a long manual than the offline extractor's rate allows", async () => {
    const manual = Array.from(
      { length: 60 },
      (_, i) =>
        `## Setting ${i}\n\nThe setting option_${i} defaults to ${i * 10} seconds and must stay below ${i * 20}.\n`,
    ).join("\n");
    const many = Array.from({ length: 200 }, (_, i) => ({
      memory: `Fact number ${i} of the manual.`,
      isStatic: true,
      subject: "manual",
      subjectKind: "document",
      attribute: null,
      value: null,
      polarity: "is",
      eventDate: null,
      isInference: false,
    }));
    server.queue.push(() => chatReply(JSON.stringify({ facts: many })));
    const facts = await extractor().extract({ text: manual, format: "plain", documentDate: "2026-03-15" });
    expect(manual.length).toBeLessThan(12_000);
    expect(facts.length).toBe(memoryBudget(manual.length));
    expect(facts[0]!.memory).toBe("Fact number 0 of the manual.");
  });
});

describe("LLM extractor: facts with a structure", () => {
  it("returns each fact's subject kind, slot, value and polarity, and a slot said to be no longer so supersedes", async () => {
    server.queue.push(() =>
      chatReply(
        JSON.stringify({
          facts: [
            {
              memory: "The user sold the Clio.",
              isStatic: false,
              subject: "the user",
              subjectKind: "user",
              attribute: "vehicle",
              value: "Clio",
              polarity: "no_longer",
              eventDate: "2026-03-10",
              isInference: false,
            },
            {
              memory: "Sofia, the user's wife, is a marine biologist.",
              isStatic: true,
              subject: "sofia",
              subjectKind: "person",
              attribute: "work",
              value: "marine biologist",
              polarity: "is",
              eventDate: null,
              isInference: false,
            },
          ],
        }),
      ),
    );
    const facts = await extractor().extract({
      text: "user: I sold the Clio. My wife Sofia is a marine biologist.",
      format: "conversation",
      documentDate: "2026-03-12",
    });
    expect(facts[0]).toMatchObject({
      subjectKind: "user",
      attribute: "vehicle",
      value: "Clio",
      polarity: "no_longer",
      corrects: true,
    });
    expect(facts[1]).toMatchObject({ subject: "sofia", subjectKind: "person", attribute: "work" });
    expect(facts[1]).not.toHaveProperty("polarity");
    expect(messages()[0]!.content).toMatch(/subjectKind/);
  });
});
