import type { SubjectKind } from "../store/memories.js";
import { readContext } from "./extract/context.js";
import { isRelationNoun as isRelation, isSomeonesRelation, USER_SUBJECT } from "./extract/people.js";

/**
 * Whose a memory is, for the user's profile. A namespace's profile is the user's: what the user
 * is, likes, does. Facts about other people stay memories of theirs (searchable, subject = that
 * person) but are never profile lines: "The user's colleague Lena Fischer prefers async code
 * reviews" is Lena's preference, not the user's.
 *
 * The user is the subject the extractors give the user ("the user", or the name the namespace's
 * context gives them, as extraction reads it: extract/context.ts). Another person is, by what the
 * memories say of them: someone of someone's ("the user's husband", "caroline's sister"), a name
 * a memory introduces as someone's ("the user's colleague Lena Fischer", "Priya Raman, the user's
 * CTO,"), or a third-person pronoun the extractor could not resolve ("She prefers ..."). A bare
 * name is left as it is: a note may well call the user by name ("Frank prefers window seats").
 */

export { USER_SUBJECT };

/** A memory as the profile reads it. */
export interface SubjectRow {
  memory: string;
  subject: string | null;
  /** Whose fact it is, as extraction said (null: a memory from before facts had kinds). */
  subject_kind?: SubjectKind | null;
  /** Who said its source turn, lowercased (conversations). */
  speaker?: string | null | undefined;
}

/** Conversation roles that are the user (as the offline extractor reads turns). */
const USER_ROLES = new Set(["user", "human", "me"]);

/** The subject keys that are the user in a namespace with these contexts. */
export function userSubjects(contexts: {
  supportingContext: string | null;
  organizationalContext: string | null;
}): Set<string> {
  const named = readContext({ text: "", format: "plain", documentDate: null, ...contexts }).userName;
  return new Set([USER_SUBJECT, ...(named ? [named.toLowerCase()] : [])]);
}

const POSSESSIVE = /^(?:.+['’]s|my|our|his|her|their|your)$/;
const THIRD_PERSON = /^(?:she|he|they|his|her|their)\b/i;

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[\s,;:()[\]]+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}'’]+$/gu, ""))
    .filter(Boolean);

/**
 * Whether the memory introduces its subject as someone's: a relation noun owned by someone just
 * before the name ("the user's colleague Lena Fischer", "my manager Tom"), or an apposition just
 * after it ("Lena Fischer, the user's colleague,", "Lena Fischer (a colleague of the user)").
 */
function introducedAsSomeones(row: SubjectRow): boolean {
  const subject = row.subject;
  if (!subject) return false;
  const text = row.memory.toLowerCase();
  const at = text.indexOf(subject);
  if (at < 0) return false;
  const before = words(text.slice(0, at)).slice(-4);
  const noun = before.findLastIndex((w, i) => i >= before.length - 3 && isRelation(w));
  if (noun >= 0 && before.slice(0, noun).some((w) => POSSESSIVE.test(w))) return true;
  const rest = text.slice(at + subject.length);
  if (!/^\s*[,(]/.test(rest)) return false;
  const after = words(rest).slice(0, 5);
  const relation = after.findIndex((w, i) => i < 4 && isRelation(w));
  return (
    relation >= 0 &&
    (after.slice(0, relation).some((w) => POSSESSIVE.test(w)) || after[relation + 1] === "of")
  );
}

/**
 * Who, among `rows`' subjects, the memories show to be someone other than the user: each row is
 * read once, so one memory that introduces "Lena Fischer" as a colleague marks her other memories
 * ("Lena Fischer prefers async code reviews") as hers too.
 */
export function otherPeople(rows: readonly SubjectRow[], user: ReadonlySet<string>): Set<string> {
  const others = new Set<string>();
  for (const r of rows) {
    if (!r.subject || user.has(r.subject)) continue;
    if (isSomeonesRelation(r.subject) || introducedAsSomeones(r)) others.add(r.subject);
  }
  return others;
}

/**
 * Whether a memory is the user's own fact: the user's, or a thing of the user's ("the user's team
 * standup"). Another person's, a document's, or a thing of no one's is not; a memory from before
 * facts had kinds is read by its words (isAboutSomeoneElse).
 */
export function isTheUsers(row: SubjectRow, user: ReadonlySet<string>, others: ReadonlySet<string>): boolean {
  switch (row.subject_kind) {
    case "user":
      return true;
    case "thing":
      return row.subject !== null && [...user].some((u) => row.subject!.startsWith(`${u}'s `));
    case "person":
    case "document":
      return false;
    default:
      return !isAboutSomeoneElse(row, user, others);
  }
}

/** Whether a memory is about someone other than the user (see the top of this file). */
export function isAboutSomeoneElse(
  row: SubjectRow,
  user: ReadonlySet<string>,
  others: ReadonlySet<string>,
): boolean {
  if (row.subject === null) return THIRD_PERSON.test(row.memory.trim());
  if (user.has(row.subject)) return false;
  return others.has(row.subject) || isSomeonesRelation(row.subject) || namedByTheUser(row, user);
}

/**
 * In their own conversation turns the user is "I": a name the user speaks of ("user: Lena Fischer
 * prefers async code reviews") is someone else. Only a name (written capitalised in the memory),
 * never a thing the user talks about ("the deadline is Friday"), nor a thing of the user's own.
 */
function namedByTheUser(row: SubjectRow, user: ReadonlySet<string>): boolean {
  const speaker = row.speaker?.toLowerCase();
  if (!speaker || !(USER_ROLES.has(speaker) || user.has(speaker)) || !row.subject) return false;
  if ([...user].some((u) => row.subject!.startsWith(`${u}'s `))) return false;
  const at = row.memory.toLowerCase().indexOf(row.subject);
  if (at < 0) return false;
  const written = row.memory.slice(at, at + row.subject.length);
  return written.split(/\s+/).every((w) => /^\p{Lu}/u.test(w));
}
