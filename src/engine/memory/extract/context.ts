import { analyse } from "./nlp.js";
import type { ExtractionInput } from "./types.js";

/** What the namespace's, document's and organization's contexts tell extraction. */
export interface ExtractionContext {
  /** Who "I" is in plain text and in "user:" turns ("Alice Chen"), when a context names them. */
  userName: string | null;
  /** Content lemmas of the contexts: a sentence mentioning one is kept even when it looks minor. */
  keywords: Set<string>;
}

// Words every context uses about itself; they say nothing about what to keep.
const GENERIC = new Set([
  "user",
  "memory",
  "fact",
  "conversation",
  "remember",
  "focus",
  "note",
  "information",
  "detail",
  "context",
  "extract",
  "keep",
  "track",
  "ignore",
  "assistant",
  "chat",
  "message",
  "namespace",
  "document",
  "content",
  "thing",
  "be",
  "have",
  "do",
  "name",
  "call",
]);
const NAME_CUE = new Set(["is", "named", "called", "name"]);

export function readContext(input: ExtractionInput): ExtractionContext {
  const texts = [input.supportingContext, input.entityContext, input.organizationalContext].filter(
    (t): t is string => typeof t === "string" && t.trim() !== "",
  );
  let userName: string | null = null;
  let fallbackName: string | null = null;
  const keywords = new Set<string>();
  // The organization's context is shared by every namespace: it may steer what is kept, never who "I" is.
  const naming = [input.supportingContext, input.entityContext];
  for (const text of texts) {
    const canName = naming.includes(text);
    for (const s of analyse(text)) {
      const tokens = s.tokens;
      for (let i = 0; i < tokens.length; i++) {
        const t = tokens[i]!;
        if ((t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "VERB") && t.lemma.length > 2) {
          if (!GENERIC.has(t.lemma)) keywords.add(t.lemma);
        }
        if (!canName || t.pos !== "PROPN") continue;
        const run = [t.value];
        for (let j = i + 1; tokens[j]?.pos === "PROPN"; j++) run.push(tokens[j]!.value);
        const name = run.join(" ");
        // "The user is Alice", "her name is Alice", "a user called Alice" name the user outright.
        const cue = tokens[i - 1]?.lower;
        if (userName === null && cue !== undefined && NAME_CUE.has(cue)) userName = name;
        fallbackName ??= name;
        i += run.length - 1;
      }
    }
  }
  return { userName: userName ?? fallbackName, keywords };
}
