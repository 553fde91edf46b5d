import { describe, expect, it } from "vitest";
import { ibanValid, luhnValid, screenSecrets } from "../../../src/engine/text/secrets.js";

// Example values from vendors' documentation, or built at run time so that no scanner takes this
// file for a leak.
const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const GITHUB = `ghp_${"R4nd0mT0k3nV4lu3Xy".repeat(2)}ab`;
const SLACK = `xoxb-${"1234567890"}-${"0987654321"}-${"AbCdEfGhIjKlMnOpQrStUvWx"}`;
const STRIPE = `sk_${"live"}_${"4eC39HqLyjWDarjtT1zdp7dc"}`;
const OPENAI = `sk-proj-${"Xq3Vb8LmN2pR7sT1uW4yZ6aC9dF0gH5jK"}`;
const GOOGLE = `AIza${"SyD-9tSrke72PouQMnMX7KqK3yW2aB1cD4e"}`;
const JWT = `eyJhbGciOiJIUzI1NiJ9.${"eyJzdWIiOiIxMjM0NTY3ODkwIn0"}.${"dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`;
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi2ZfLLZbZ0pYd6pN9sEzcbL8Hh",
  "k2Vv9aXbQ0uQhJ5vM2bC1tH0bW3Jm9Yq0rXq8R6d3J4c2pYt5nQfUeK1mZ0b7Lw=",
  "-----END RSA PRIVATE KEY-----",
].join("\n");

const kinds = (text: string) =>
  Object.fromEntries(screenSecrets(text).redacted.map((r) => [r.kind, r.count]));

describe("secret screening: what is found", () => {
  it.each([
    ["The user's gym membership PIN is 4417.", "PIN", "4417"],
    ["My bank card PIN: 0815", "PIN", "0815"],
    ["the pin is 2580 for the side door", "PIN", "2580"],
    ["Door code 73519, then push hard.", "PIN", "73519"],
    ["The CVV is 123.", "card security code", "123"],
    ["The wifi password is sunflower22.", "password", "sunflower22"],
    ['password: "correct horse battery staple"', "password", "correct horse battery staple"],
    ["The password for the router is Tr0ub4dor&3!", "password", "Tr0ub4dor&3"],
    [`aws_access_key_id = ${AWS_KEY}`, "AWS access key", AWS_KEY],
    [`Deploy with ${GITHUB} on CI.`, "GitHub token", GITHUB],
    [`SLACK_BOT=${SLACK}`, "Slack token", SLACK],
    [`billing uses ${STRIPE}`, "Stripe key", STRIPE],
    [`OPENAI_API_KEY=${OPENAI}`, "OpenAI key", OPENAI],
    [`maps key ${GOOGLE} (restricted)`, "Google API key", GOOGLE],
    [`Authorization: Bearer ${JWT}`, "JWT", JWT],
    ["api_key = 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "key", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"],
    ["The session token is q8Zr2LmX9vB4nT7pK1wY5cD3", "token", "q8Zr2LmX9vB4nT7pK1wY5cD3"],
    ["client_secret: Gx7Pq2Vn9Lk4Tz8Rw1Yb6Hm3", "secret", "Gx7Pq2Vn9Lk4Tz8Rw1Yb6Hm3"],
    ["Pay with card 4111 1111 1111 1111 please", "card number", "4111 1111 1111 1111"],
    ["Mastercard 5555-5555-5555-4444 expires 09/27", "card number", "5555-5555-5555-4444"],
    ["Amex 3782 822463 10005", "card number", "3782 822463 10005"],
    ["card no 4012888888881881", "card number", "4012888888881881"],
    ["Rent goes to DE89 3704 0044 0532 0130 00 monthly.", "IBAN", "DE89 3704 0044 0532 0130 00"],
    ["IBAN GB82WEST12345698765432", "IBAN", "GB82WEST12345698765432"],
  ])("%s: a %s", (text, kind, secret) => {
    const out = screenSecrets(text);
    expect(out.text).not.toContain(secret);
    expect(out.text).toContain(`[redacted: ${kind}]`);
    expect(out.redacted).toEqual([{ kind, count: 1 }]);
  });

  it("keeps the label and the rest of the sentence around a value", () => {
    expect(screenSecrets("The user's gym membership PIN is 4417.").text).toBe(
      "The user's gym membership PIN is [redacted: PIN].",
    );
    expect(screenSecrets("The wifi password is sunflower22. The router is in the hall.").text).toBe(
      "The wifi password is [redacted: password]. The router is in the hall.",
    );
  });

  it("finds an AWS secret key beside its key id, and a private key block whole", () => {
    const note = `aws_access_key_id=${AWS_KEY}\naws_secret_access_key=${AWS_SECRET}\nregion=eu-west-1`;
    const out = screenSecrets(note);
    expect(out.text).toBe(
      "aws_access_key_id=[redacted: AWS access key]\naws_secret_access_key=[redacted: AWS secret key]\nregion=eu-west-1",
    );
    const pem = screenSecrets(`Server key:\n${PEM}\nKeep it safe.`);
    expect(pem.text).toBe("Server key:\n[redacted: private key]\nKeep it safe.");
    // As a service account's JSON holds it: line breaks escaped.
    const json = screenSecrets(
      `{"private_key": "${PEM.replaceAll("\n", "\\n")}\\n", "type": "service_account"}`,
    );
    expect(json.text).toBe('{"private_key": "[redacted: private key]\\n", "type": "service_account"}');
  });

  it("counts every secret of a note, by kind, and keeps its other facts", () => {
    const note = [
      "Gym: membership PIN is 4417, classes on Tuesdays.",
      `Cloud: ${AWS_KEY} with secret ${AWS_SECRET}.`,
      "Card 4111 1111 1111 1111 for groceries; wifi password is blue-otter-42.",
      "My sister Ana lives in Porto.",
    ].join("\n");
    const out = screenSecrets(note);
    for (const secret of ["4417", AWS_KEY, AWS_SECRET, "4111 1111 1111 1111", "blue-otter-42"])
      expect(out.text).not.toContain(secret);
    expect(out.text).toContain("classes on Tuesdays");
    expect(out.text).toContain("My sister Ana lives in Porto.");
    expect(kinds(note)).toEqual({
      PIN: 1,
      "AWS access key": 1,
      "AWS secret key": 1,
      "card number": 1,
      password: 1,
    });
  });
});

describe("secret screening: what is left as it is", () => {
  it.each([
    ["an order number", "Order 4532015112830366 shipped; tracking number 4111111111111111 too."],
    ["an Amazon-style order", "Order #112-4567890-1234567 arrives Friday."],
    ["dates", "Born 1987-03-14, moved on 14/03/2021 and again on 2024-11-28T10:15:00Z."],
    ["phone numbers", "Call +1 415 555 0132 or 0044 20 7946 0958, or +351912345678."],
    ["versions", "Upgrade from v1.2.3 to 10.0.19045.3803, node 24.11.1."],
    ["a git commit hash", "The fix is commit 9fceb02d0ae598e95dc970b74767f19372d61af8 on main."],
    [
      "UUIDs in code",
      'const REQUEST_ID = "123e4567-e89b-12d3-a456-426614174000";\nuser_id: 3f2b8c1e-9d4a-4b6f-8e2a-7c5d1f0a9b3e',
    ],
    ["ISBNs", "Read ISBN 978-3-16-148410-0 and 9780306406157 next."],
    ["a number that fails Luhn", "Card 4111 1111 1111 1112 was declined."],
    ["an IBAN that fails mod-97", "Wrong IBAN DE89 3704 0044 0532 0130 01."],
    ["a pin of a circuit", "Connect pin 13 to ground; the Pin 7 LED blinks."],
    ["a password described, not stated", "The password is the same as before. The password is required."],
    ["words about passwords", "Passwords are stored in 1Password; password reset link expires soon."],
    ["a token described", "The token expired yesterday; refresh tokens last 30 days."],
    ["a plain long word said to be a key", "The key is understanding_the_customer"],
    ["a big number", "The population is 8300000000000 people by then, and 1700000000000 ms."],
    ["decimals", '{"p95": 37.770707999996375, "p99": 48.2716111111111116}'],
    [
      "a password field in code",
      "interface Login { password: string; }\nconst login = { password: user.password, remember: true };",
    ],
    ["a label run into a word", '"Keywords_cannot_contain_escape_characters_1260": "..."'],
    [
      "40 characters of a longer base64url string beside the word secret",
      "client secret rotated; PKCE challenge dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ],
  ])("%s", (_, text) => {
    expect(screenSecrets(text)).toEqual({ text, redacted: [] });
  });
});

describe("secret screening's checks", () => {
  it("Luhn and mod-97 accept valid numbers only", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(ibanValid("DE89370400440532013000")).toBe(true);
    expect(ibanValid("DE89370400440532013001")).toBe(false);
    expect(ibanValid("GB82 WEST 1234 5698 7654 32")).toBe(true);
    // A valid checksum with the wrong length for its country.
    expect(ibanValid("DE8937040044053201300")).toBe(false);
  });
});
