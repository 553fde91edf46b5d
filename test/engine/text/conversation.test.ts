import { describe, expect, it } from "vitest";
import { conversationTurns, detectFormat } from "../../../src/engine/text/conversation.js";

describe("detectFormat", () => {
  it.each([
    ["user and assistant", "user: I moved to Berlin.\nassistant: How is it going?\nuser: Great."],
    ["two turns", "user: hello\nassistant: hi, how can I help?"],
    [
      "named speakers",
      "Caroline: I went to a support group yesterday.\nMelanie: How was it?\nCaroline: Powerful.",
    ],
    ["titles with dots", "Dr. Smith: How are you feeling?\nJohn Doe: Better, thanks.\nDr. Smith: Good."],
    [
      "timestamps",
      "[2023-05-07 10:00] Caroline: hi\n[2023-05-07 10:01] Melanie: hey there\n[10:02] Caroline: ok",
    ],
    ["a single turn of a chat role (an MCP client's first logged turn)", "user: I live in Paris."],
    ["a single assistant turn", "Assistant: Noted, you live in Paris."],
    [
      "a turn continued on the next line, and blank lines",
      "user: here is my list\n- eggs\n\nassistant: noted.\nuser: thanks\nassistant: welcome",
    ],
  ])("recognises a transcript: %s", (_name, text) => {
    expect(detectFormat(text)).toBe("conversation");
  });

  it.each([
    ["prose", "I moved to Berlin in May. It was a big change.\nThe city is lovely."],
    ["a single turn of another role (it may be a note)", "Reminder: I have a dentist appointment on Friday."],
    ["a single chat-role line in prose", "user: is the table's first column.\nThe rest are settings."],
    [
      "a header of distinct keys",
      "Title: Trip report\nAuthor: Caroline\nDate: 2023-05-07\nSummary: We went hiking.",
    ],
    [
      "prose with a colon here and there",
      "Ingredients: flour and eggs.\nMix them well.\nBake for an hour.\nServe warm.",
    ],
    ["notes and URLs", "Note: call Bob\nhttps://example.com\nWarning: it rains\nTodo: buy milk"],
    [
      "a long sentence before the colon",
      "This is what we decided after the meeting: nothing.\nAnd then: more.\nOk.",
    ],
    ["empty", ""],
  ])("does not mistake %s for a transcript", (_name, text) => {
    expect(detectFormat(text)).toBe("plain");
  });
});

describe("conversationTurns", () => {
  it("gives each turn its exact span, continuation lines included", () => {
    const text = "  user: here is my list\n- eggs\r\n\nassistant: noted.\n";
    const turns = conversationTurns(text);
    expect(turns.map((t) => t.role)).toEqual(["user", "assistant"]);
    expect(turns.map((t) => text.slice(t.start, t.end))).toEqual([
      "user: here is my list\n- eggs",
      "assistant: noted.",
    ]);
    expect(turns.map((t) => text.slice(t.bodyStart, t.end))).toEqual(["here is my list\n- eggs", "noted."]);
  });

  it("starts what was said after a timestamp and the role; text before any turn has no role", () => {
    const text =
      "Notes from the call\n[2023-05-07 10:00] Caroline:  I adopted a kitten.\n[2023-05-07 10:01] Dr. Smith: Lovely.";
    const turns = conversationTurns(text);
    expect(turns.map((t) => t.role)).toEqual(["", "Caroline", "Dr. Smith"]);
    expect(turns.map((t) => text.slice(t.bodyStart, t.end))).toEqual([
      "Notes from the call",
      "I adopted a kitten.",
      "Lovely.",
    ]);
  });
});
