import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

// AWS's documented example key pair; the other values are made up.
const SECRETS = {
  pin: "4417",
  awsKey: "AKIAIOSFODNN7EXAMPLE",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  card: "4111 1111 1111 1111",
  password: "sunflower22",
};
const NOTE = [
  `My gym membership PIN is ${SECRETS.pin}.`,
  `My AWS access key is ${SECRETS.awsKey} and the secret key is ${SECRETS.awsSecret}.`,
  `My credit card number is ${SECRETS.card}.`,
  `Our wifi password is ${SECRETS.password}.`,
  "My sister Ana lives in Porto.",
  "I am allergic to peanuts.",
].join("\n");

describe("a note holding secrets, told to add_memory", () => {
  let t: TestEngine;
  let s: Session;
  let added: Record<string, unknown>;
  let addText: string;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "personal" });
    const res = await call(s.mcp, "add_memory", { content: NOTE, wait: true });
    added = structured(res);
    addText = text(res);
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  const leaks = (out: string) => Object.values(SECRETS).filter((secret) => out.includes(secret));

  it("says what was redacted before storing", () => {
    expect(added.memoriesReady).toBe(true);
    expect(added.redacted).toEqual(
      expect.arrayContaining([
        { kind: "PIN", count: 1 },
        { kind: "AWS access key", count: 1 },
        { kind: "AWS secret key", count: 1 },
        { kind: "card number", count: 1 },
        { kind: "password", count: 1 },
      ]),
    );
    const said = /Not stored: (.*), replaced by a \[redacted: …\] marker/.exec(addText)?.[1];
    for (const kind of ["a PIN", "an AWS access key", "an AWS secret key", "a card number", "a password"])
      expect(said).toContain(kind);
  });

  it("keeps none of them in memories, the profile or search, and keeps the note's other facts", async () => {
    const memories = await call(s.mcp, "list", { type: "memories", limit: 100 });
    expect(leaks(JSON.stringify(memories))).toEqual([]);
    expect(text(memories)).toMatch(/Porto/);
    expect(text(memories)).toMatch(/peanuts/);

    const profile = await call(s.mcp, "get_profile");
    expect(leaks(JSON.stringify(profile))).toEqual([]);
    expect(text(profile)).toMatch(/allergic to peanuts/);

    for (const query of [
      "gym PIN",
      "AWS access key secret",
      "credit card number",
      "wifi password",
      "sister",
    ]) {
      const found = await call(s.mcp, "search", { query, threshold: 0 });
      expect(leaks(JSON.stringify(found)), query).toEqual([]);
    }
    const sister = await call(s.mcp, "search", { query: "Where does the user's sister live?" });
    expect(text(sister)).toMatch(/Ana lives in Porto/);
    const pin = await call(s.mcp, "search", { query: "What is the gym PIN?" });
    // The fact that there is a PIN stays; its value does not.
    expect(text(pin)).toMatch(/PIN is \[redacted: PIN\]/);

    const chunks = await call(s.mcp, "list", { type: "chunks", limit: 100 });
    expect(leaks(JSON.stringify(chunks))).toEqual([]);
  });
});
