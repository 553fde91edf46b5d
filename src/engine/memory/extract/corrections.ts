/**
 * Corrections as people say them: "actually", "not X anymore", "no longer", "instead", "switched
 * from X to Y", "cancelled X", "correction:", "I was wrong about X". A correction names the value
 * it replaces (X) when it can: the memory of the same subject that holds X is the one it
 * supersedes; without one, the cue alone lets it supersede the latest value of a one-valued
 * attribute (where someone lives, their job), even one told as a dated event.
 */
export interface Correction {
  /** The sentence corrects something said before. */
  cue: boolean;
  /** The old values it names ("Porto", "Monday", "gym membership"). */
  replaces: string[];
  /** Spans of the sentence (its own offsets) that only say what is no longer so, to leave out of the memory. */
  drop: { start: number; end: number }[];
  /** The sentence says something is no longer so ("no longer", "not ... anymore", "quit", "sold"). */
  noLonger: boolean;
}

// An old value: one to four words, not a pronoun or a filler.
const VALUE = String.raw`((?:[\p{L}\p{N}'’&.-]+\s+){0,3}?[\p{L}\p{N}'’&-]+)`;
const PREP = String.raw`(?:(?:in|at|with|to|from|for|on|into|a|an|the|my|our|his|her|their|your)\s+)*`;
const ANYMORE = "(?:anymore|any more|any longer)";
const NOT_A_VALUE =
  /^(?:it|that|this|them|him|her|there|here|so|much|really|sure|anymore|anything|something|one|too|yet|now|again|ever|just|even)$/i;

interface Rule {
  re: RegExp;
  /** The matched clause only says what is no longer so: left out when the sentence states the new value too. */
  droppable?: boolean;
}

const RULES: Rule[] = [
  // "..., not Porto anymore", "and not with Acme any longer": a clause added to the new value
  {
    re: new RegExp(String.raw`(?:[,;]\s*|\s+(?:and|but)\s+)not\s+${PREP}${VALUE}\s+${ANYMORE}\b`, "giu"),
    droppable: true,
  },
  // "I'm not with Acme anymore", "he's not here anymore": the statement itself
  { re: new RegExp(String.raw`(?<![,;]\s*|\b(?:and|but)\s+)\bnot\s+${PREP}${VALUE}\s+${ANYMORE}\b`, "giu") },
  // "I don't work at Google anymore", "she doesn't eat meat any longer"
  {
    re: new RegExp(
      String.raw`\b(?:do|does|did)\s*(?:n['’]t|not)\s+\p{L}+\s+${PREP}${VALUE}\s+${ANYMORE}\b`,
      "giu",
    ),
  },
  // "I no longer eat meat", "he's no longer at Acme"
  {
    re: new RegExp(
      String.raw`\bno longer\s+(?:\p{L}+\s+)?${PREP}${VALUE}(?=\s*(?:[,.;!?)]|$|\s(?:and|but|since|because)\b))`,
      "giu",
    ),
  },
  // "on Tuesday, not Monday", "Braga rather than Porto", "tea instead of coffee"
  {
    re: new RegExp(
      String.raw`(?:,\s*not|\s+rather than|\s+instead of)\s+${PREP}${VALUE}(?=\s*(?:[,.;!?)]|$))`,
      "giu",
    ),
    droppable: true,
  },
  // "switched from Android to iPhone", "moved from Porto to Braga"
  {
    re: new RegExp(
      String.raw`\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|transitioned|converted|migrated)\s+from\s+${PREP}${VALUE}\s+to\b`,
      "giu",
    ),
  },
  // "cancelled my gym membership", "called off the wedding", "quit my job", "gave up coffee"
  {
    re: new RegExp(
      String.raw`\b(?:cancel(?:l?ed|l?ing|s)?|called off|call off|quit|quitting|gave up|given up|give up|stopped|dropped out of)\s+(?!by\b|at\b|in\b|off\b|over\b)${PREP}${VALUE}(?=\s*(?:[,.;!?]|$|\s(?:and|but|because|since|after|for|last|this|on|in|at)\b))`,
      "giu",
    ),
  },
  // "sold the Clio", "sold my car": what was sold is no longer the seller's
  {
    re: /\b(?:sold|sell|selling)\s+(?:the|my|our|his|her|their)?\s*((?:\p{Lu}[\p{L}\p{N}'’&-]*\s*){1,3}|car|bike|house|flat|apartment|motorbike|motorcycle|scooter|van|boat)(?=\s*(?:[,.;!?]|$|\s(?:and|but|last|this|on|in|at|for|to|because)\b))/gu,
  },
  // "left Lumen Labs", "left Berlin": a named employer or place left behind ("left the office early" names none)
  {
    re: /\b(?:left|leaving|leave|quit)\s+((?:\p{Lu}[\p{L}\p{N}'’&-]*\s*){1,3})(?=\s*(?:[,.;!?]|$|\s(?:and|but|last|this|on|in|at|for|to|because|after)\b))/gu,
  },
  // "I was wrong about the venue", "I got the date wrong"
  {
    re: new RegExp(
      String.raw`\b(?:was|were|am|is)\s+wrong\s+about\s+${PREP}${VALUE}(?=\s*(?:[,.;:!?]|$))`,
      "giu",
    ),
  },
  { re: new RegExp(String.raw`\b(?:got|had)\s+${PREP}${VALUE}\s+wrong\b`, "giu") },
];

// Cues that say a correction without naming the old value.
const OPENING_CUE =
  /^\s*(?:(?:oh|ah|wait|sorry|oops|no)[,!.]?\s+)*(?:actually|correction|scratch that|to correct (?:myself|that)|i meant|update)\b\s*[:,-]?\s*/i;
const CUE = new RegExp(
  String.raw`\b(?:${ANYMORE}|no longer|instead|switched|was wrong|got .{1,30} wrong)\b`,
  "iu",
);

// What says a value is no longer so.
const NO_LONGER =
  /\bno longer\b|\b(?:not|never|n['’]t)\b[^.;!?]{0,60}?\b(?:anymore|any more|any longer)\b|\b(?:quit|quitting|stopped|gave up|given up|sold|cancel(?:l?ed))\b/i;

export function correctionOf(sentence: string): Correction {
  const replaces: string[] = [];
  const drop: { start: number; end: number }[] = [];
  let cue = false;
  const opening = OPENING_CUE.exec(sentence);
  if (opening && /\S/.test(sentence.slice(opening[0].length))) {
    cue = true;
    // "Correction:" and "Scratch that," say nothing once the memory replaces the old one.
    if (!/^\s*actually/i.test(opening[0])) drop.push({ start: 0, end: opening[0].length });
  }
  if (CUE.test(sentence)) cue = true;
  for (const rule of RULES) {
    for (const m of sentence.matchAll(rule.re)) {
      // "won't quit on their dreams", "don't give up": a negated ending ends nothing.
      if (/(?:\bnot|\bnever|n['’]t)\s+$/i.test(sentence.slice(Math.max(0, m.index - 12), m.index))) continue;
      const value = m[1]!
        .trim()
        .replace(/[.,]+$/, "")
        .replace(/\s+(?:anymore|any more|any longer)$/i, "");
      // "not here with us anymore": a value opens with what it is, not with a pointing word.
      if (value === "" || NOT_A_VALUE.test(value.split(/\s+/)[0]!)) continue;
      cue = true;
      replaces.push(value);
      if (rule.droppable) {
        // Left out only when what stays still says something (a verb and more than the old value).
        const rest = sentence.slice(0, m.index) + sentence.slice(m.index + m[0].length);
        if (rest.trim().split(/\s+/).length >= 3) drop.push({ start: m.index, end: m.index + m[0].length });
      }
    }
  }
  return {
    cue,
    replaces: [...new Set(replaces.map((r) => r.trim()).filter((r) => r !== ""))],
    drop,
    noLonger: NO_LONGER.test(sentence),
  };
}
