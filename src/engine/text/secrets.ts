/**
 * Secret screening: what an agent is told must not become a memory. A memory is read back into
 * prompts, profiles and exports, so a PIN, a key, a card number or a password told in passing
 * would travel everywhere the memory does. Each detector below finds one kind of secret; what it
 * finds is replaced by a marker (`[redacted: card number]`) and the rest of the text is kept.
 *
 * Not to be confused with redact.ts, which takes forgotten sentences out of passages.
 *
 * Detectors err on the side of the user's other facts: a number is a card only when its Luhn
 * digit checks and it starts as a card does, an IBAN only when its mod-97 checks, a PIN or a
 * password only when the text says it is one, a long random string only when it is a known key
 * format or said to be a key, token or secret. Order numbers, dates, phone numbers, versions,
 * commit hashes, UUIDs and ISBNs are left as they are (test/engine/text/secrets.test.ts).
 */

/** How many secrets of one kind were replaced. */
// A type, not an interface: the contract's loose objects (api/documents.ts Redacted) take it as it is.
export type Redaction = { kind: string; count: number };

export interface Screened {
  text: string;
  /** Empty when nothing was found. */
  redacted: Redaction[];
}

interface Detector {
  /** What the marker and the add's answer call it; a function names it from what was matched. */
  kind: string | ((match: RegExpExecArray) => string);
  /** Global. The `secret` group, when it matched, is what is replaced; otherwise the whole match. */
  pattern: RegExp;
  /** Whether a candidate is a secret after all (a checksum, its context). */
  accept?: (secret: string, text: string, at: number, match: RegExpExecArray) => boolean;
}

export const marker = (kind: string) => `[redacted: ${kind}]`;

// ---------- checks ----------

/** The Luhn check digit of a card number. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** IBAN lengths by country (ISO 13616 registry): a country code with another length is no IBAN. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** The IBAN check: its length for its country, and the number it spells is 1 modulo 97. */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, "").toUpperCase();
  if (IBAN_LENGTHS[s.slice(0, 2)] !== s.length) return false;
  let rest = 0;
  for (const c of s.slice(4) + s.slice(0, 4)) {
    const v = c >= "A" ? c.charCodeAt(0) - 55 : c.charCodeAt(0) - 48;
    rest = (v > 9 ? rest * 100 + v : rest * 10 + v) % 97;
  }
  return rest === 1;
}

/** Shannon entropy in bits per character: a random key is near 4 and up, a word or a name below 3.5. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** A string that looks made by a machine: letters and digits mixed, and varied enough. */
const looksRandom = (s: string, minEntropy: number) =>
  /\d/.test(s) && /[A-Za-z]/.test(s) && entropy(s) >= minEntropy;

/** A card's first digits (Visa, Mastercard, Amex, Diners, JCB, Discover, UnionPay, Maestro). */
const CARD_PREFIX = /^(?:4|5[0-8]|2[2-7]|3[0456789]|6)/;
/** Words before a number that make it an order, a phone or a book, not a card, unless a card is named too. */
const NOT_A_CARD =
  /\b(?:order|tracking|invoice|ref|reference|confirmation|booking|ticket|isbn|serial|phone|tel|fax|mobile|parcel|shipment|transaction|account|customer|member|policy|case|id)\b/;
const A_CARD = /\b(?:card|visa|master ?card|amex|american express|credit|debit|cc|payment)\b/;

/**
 * Words that, said after "password is", describe the password rather than state it ("the
 * password is the same", "is required", "is too short").
 */
const NOT_A_PASSWORD = new Set(
  (
    "a an the my your his her our their its this that same different changed unchanged reset required " +
    "wrong correct incorrect right weak strong long short expired saved stored written needed protected " +
    "secure insecure encrypted hidden unknown empty blank missing forgotten lost new old below above " +
    "attached here there in on at set updated still also too very not case-sensitive see sent shared " +
    "something somewhere what which who whatever printed taped be being been " +
    // A field's type or a placeholder in code ("password: string;", "password: true").
    "string str number boolean bool true false null nil none undefined any optional text varchar bytes"
  ).split(" "),
);

/** An expression in code, not a value: "password: user.password", "password: env[KEY]", "password: read()". */
const CODE_EXPRESSION = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$]|\[|\()/;

/** Closing quote for an opening one. */
const QUOTES: Record<string, string> = { '"': '"', "'": "'", "`": "`", "“": "”", "‘": "’" };

// ---------- detectors ----------

/** A value said after a label: "is", "was", "=", ":" and the like, maybe with "now" or "still". */
const SAID = String.raw`(?:'s)?\s*(?:(?:is|was|are|=|:|=>|->|-)\s*)?(?:now\s+|still\s+)?`;
/** A label's own words, up to three ("PIN for the gym", "password of the router"). */
const OF_WHAT = String.raw`(?:\s+(?:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+)?[\w'.-]+(?:\s+[\w'.-]+)?)?`;

/**
 * In order: a detector runs on what the ones before left, so a private key's base64 or a
 * vendor's key is gone before the generic and number detectors look.
 */
const DETECTORS: Detector[] = [
  {
    kind: "private key",
    // PEM blocks (PKCS#1/8, OpenSSH, EC, encrypted, PGP), also with JSON's "\n" escapes (a
    // service account file); one cut short still loses the base64 that follows its first line.
    pattern:
      /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?:[\s\S]*?-----END \1-----|(?:[A-Za-z0-9+/=:,-]|\s|\\n)*)/g,
  },
  { kind: "AWS access key", pattern: /\b(?<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b/g },
  { kind: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,246})\b/g },
  { kind: "Slack token", pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,250}/g },
  { kind: "Stripe key", pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}\b/g },
  {
    kind: "Anthropic key",
    pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g,
  },
  {
    kind: "OpenAI key",
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
    accept: (s) => looksRandom(s.slice(3), 3),
  },
  { kind: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: "JWT", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g },
  {
    kind: "AWS secret key",
    // 40 characters of base64 beside an AWS key id (or the words "aws" or "secret"): mixed case,
    // so that a git commit hash (40 hex digits, lowercase) is never one.
    // Whole: 40 characters inside a longer base64url run (a PKCE challenge, a token) are not one.
    pattern: /(?<![A-Za-z0-9/+_-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])/g,
    accept: (s, text, at) =>
      /[a-z]/.test(s) &&
      /[A-Z]/.test(s) &&
      /[0-9/+]/.test(s) &&
      /\[redacted: AWS access key\]|\baws\b|secret/i.test(text.slice(Math.max(0, at - 300), at + 340)),
  },
  {
    kind: (m) => (/token|bearer/i.test(m[1]!) ? "token" : /secret/i.test(m[1]!) ? "secret" : "key"),
    // A long random string said to be a key, token or secret ("api_key = ...", "Bearer ...").
    pattern: new RegExp(
      String.raw`\b((?:api|access|secret|client|account|private|signing|encryption|master|webhook|shared[ _-]?access|app|auth|bearer|refresh|session|personal[ _-]?access)?[ _-]?(?:key|token|secret)(?:[ _-]?id)?|bearer|AccountKey|SharedAccessKey|client[ _-]?secret|api[ _-]?key|apikey)["']?` +
        String.raw`(?:\s*(?:=>|->|[:=])\s*|\s+(?:(?:is|was|are)\s+)?(?:now\s+)?)["'\`]?(?<secret>[A-Za-z0-9_\-+/=.~]{16,512})`,
      "gi",
    ),
    accept: (s) => looksRandom(s.replace(/=+$/, ""), 3.2),
  },
  {
    kind: "card number",
    pattern:
      /(?<![\w-]|\d[.,])(?:\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -])\d{6}\2\d{5}|\d{13,19})(?![\w-]|[.,]\d)/g,
    accept: (s, text, at) => {
      const digits = s.replace(/\D/g, "");
      if (digits.length < 13 || digits.length > 19) return false;
      if (!CARD_PREFIX.test(digits) || !luhnValid(digits)) return false;
      const before = text.slice(Math.max(0, at - 40), at).toLowerCase();
      return A_CARD.test(before) || !NOT_A_CARD.test(before);
    },
  },
  {
    kind: "IBAN",
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g,
    accept: (s) => ibanValid(s),
  },
  {
    kind: (m) => (/^c[vs]/i.test(m[1]!) ? "card security code" : "PIN"),
    // A PIN or code said to be one ("PIN is 4417", "door code: 2580", "CVV 123"): "PIN" in capitals
    // or a "pin" given a value, so that "pin 13" of a circuit stays.
    pattern: new RegExp(
      String.raw`(\b(?:PIN|Pin)(?:\s*(?:code|number|no\.?|#))?|\bpin\s*(?:code|number)|\b(?i:pass ?code|security code|access code|door code|gate code|alarm code|entry code|lock code|garage code|keypad code|safe code|unlock code)|\b(?:CVV2?|CVC2?|CSC|cvv2?|cvc2?)|\bpin(?=\s*(?:is|was|[:=])))` +
        String.raw`${OF_WHAT}${SAID}["'“]?(?<secret>\d{3,8})(?![\d.,:/-]?\d)`,
      "g",
    ),
  },
  {
    kind: "password",
    // A password said to be one; a quoted one may hold spaces. The words that describe a
    // password ("is the same", "is required") are not one (NOT_A_PASSWORD).
    pattern: new RegExp(
      String.raw`\b(?:password|passwd|passphrase|pass phrase|wi-?fi key|wlan key|network key)${OF_WHAT}` +
        String.raw`(?:'s)?\s*(?:is|was|=|:|->|=>)\s*(?:now\s+|still\s+)?(?<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|“[^”\n]{1,200}”|\x60[^\x60\n]{1,200}\x60|[^\s"'“\x60\[][^\s]{0,199})`,
      "gi",
    ),
    accept: (s) => {
      if (QUOTES[s[0]!]) return true;
      const word = s.toLowerCase();
      return !NOT_A_PASSWORD.has(word) && !/^https?:/.test(word) && !CODE_EXPRESSION.test(s);
    },
  },
];

/** The matched secret without the punctuation that ends its sentence, for an unquoted value. */
function trimmed(s: string): string {
  if (QUOTES[s[0]!] && s.endsWith(QUOTES[s[0]!]!)) return s;
  return s.replace(/[.,;:!?)\]}>]+$/, "");
}

/**
 * The text with every secret the detectors find replaced by its marker, and what was replaced.
 * Text without secrets comes back as it was (the same string).
 */
export function screenSecrets(text: string): Screened {
  const counts = new Map<string, number>();
  let out = text;
  for (const d of DETECTORS) {
    d.pattern.lastIndex = 0;
    let rebuilt = "";
    let last = 0;
    let changed = false;
    for (let m = d.pattern.exec(out); m !== null; m = d.pattern.exec(out)) {
      const group = m.groups?.secret;
      let secret = group ?? m[0];
      if (group !== undefined) secret = trimmed(secret);
      const at = m.index + (group !== undefined ? m[0].length - group.length : 0);
      if (secret.length === 0 || (d.accept && !d.accept(secret, out, at, m))) {
        // A rejected candidate may hide a real one starting inside it ("PIN" then a number).
        d.pattern.lastIndex = m.index + 1;
        continue;
      }
      const kind = typeof d.kind === "string" ? d.kind : d.kind(m);
      rebuilt += out.slice(last, at) + marker(kind);
      last = at + secret.length;
      changed = true;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      d.pattern.lastIndex = Math.max(last, m.index + m[0].length);
    }
    if (changed) out = rebuilt + out.slice(last);
  }
  return { text: out, redacted: [...counts].map(([kind, count]) => ({ kind, count })) };
}

/** Adds up what several screenings replaced, by kind. */
export function mergeRedactions(...lists: readonly (readonly Redaction[] | undefined)[]): Redaction[] {
  const counts = new Map<string, number>();
  for (const list of lists)
    for (const r of list ?? []) counts.set(r.kind, (counts.get(r.kind) ?? 0) + r.count);
  return [...counts].map(([kind, count]) => ({ kind, count }));
}
