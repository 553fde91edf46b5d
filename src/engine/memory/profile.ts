import type { Filter } from "../../api/filter.js";
import type { Profile } from "../../api/profile.js";
import type { EngineContext } from "../context.js";
import type { Db } from "../store/db.js";
import { namespaceContexts } from "../store/namespaces.js";
import {
  type BucketDefinition,
  bucketMap,
  deleteBuckets,
  effectiveBuckets,
  type ProfileRow,
  type ProfileScope,
  profileChanges,
  profileDocuments,
  profileMemoriesHolding,
  profileSection,
  putBuckets,
} from "../store/profile.js";
import { type QueryTerm, queryTerms, stemTexts } from "../text/terms.js";
import { SLOTS } from "./extract/slots.js";
import { isTheUsers, otherPeople, userSubjects } from "./whose.js";

/** Static facts in a profile: the newest first, at most this many. */
export const PROFILE_STATIC_MAX = 100;
/** Dynamic facts in a profile: the most recent, at most this many. */
export const PROFILE_DYNAMIC_MAX = 20;
/** Memories per bucket. */
export const PROFILE_BUCKET_MAX = 20;
/** Memories holding a bucket's words that are classified, at most. */
const BUCKET_CANDIDATES = 500;
const STEM_SLICE = 50;
/**
 * Candidates read per section, times what it shows: facts about other people are read and left
 * out (memory/whose.ts), and the section is still full unless most of the newest are theirs.
 */
const SECTION_READ_FACTOR = 2;

/** A profile request narrowed to a bucket the namespace does not have (the route answers 400). */
export class UnknownBucketError extends Error {
  constructor(
    readonly bucket: string,
    readonly known: string[],
  ) {
    super(`buckets: unknown bucket '${bucket}' (effective buckets: ${known.join(", ") || "none"})`);
    this.name = "UnknownBucketError";
  }
}

// The effective buckets as a list of definitions (the legacy routes answer them so).
export { effectiveBuckets };

/** The effective buckets of a namespace (null: one never written) as the contract answers them. */
export async function bucketDefinitions(
  db: Db,
  organizationId: string,
  namespaceId: string | null,
): Promise<Record<string, string>> {
  return bucketMap(await effectiveBuckets(db, organizationId, namespaceId));
}

/**
 * Adds or updates a namespace's buckets, making the namespace in the same transaction (a refused
 * change, naming an organization's bucket, creates nothing); answers the effective buckets.
 */
export async function setBuckets(
  ctx: EngineContext,
  organizationId: string,
  namespace: string,
  buckets: Record<string, string>,
): Promise<Record<string, string>> {
  const namespaceId = await putBuckets(ctx.db, organizationId, namespace, buckets);
  return await bucketDefinitions(ctx.db, organizationId, namespaceId);
}

/** Removes namespace buckets by name; answers the effective buckets. */
export async function removeBuckets(
  db: Db,
  organizationId: string,
  namespaceId: string | null,
  names: readonly string[],
): Promise<Record<string, string>> {
  await deleteBuckets(db, organizationId, namespaceId, names);
  return await bucketDefinitions(db, organizationId, namespaceId);
}

export interface ProfileRequest {
  filter?: Filter | undefined;
  /** Narrows the bucket section to these names; every one must be an effective bucket. */
  buckets?: readonly string[] | undefined;
}

type Ref = { id: string; memory: string };

/**
 * The namespace's profile: `static` (latest, live static memories: identity, preferences,
 * relationships, work, home), `dynamic` (latest, live dynamic memories, most recent first) and
 * one list per effective bucket. Forgotten memories, those past `forget_after` and superseded
 * versions never appear, nor facts about people other than the user (memory/whose.ts): the
 * profile is the user's; `filter` applies to every section. `namespaceId` null: nothing stored yet.
 */
export async function buildProfile(
  db: Db,
  organizationId: string,
  namespaceId: string | null,
  req: ProfileRequest = {},
): Promise<Profile> {
  const defined = await effectiveBuckets(db, organizationId, namespaceId);
  let chosen = defined;
  if (req.buckets) {
    const byName = new Map(defined.map((b) => [b.name, b]));
    const unknown = req.buckets.find((n) => !byName.has(n));
    if (unknown !== undefined) throw new UnknownBucketError(unknown, [...byName.keys()]);
    chosen = req.buckets.map((n) => byName.get(n)!);
  }
  if (!namespaceId) {
    return { static: [], dynamic: [], buckets: Object.fromEntries(chosen.map((b) => [b.name, []])) };
  }
  const scope: ProfileScope = { namespaceId, filter: req.filter, at: new Date().toISOString() };
  // Every candidate is read first: one memory that says who someone is ("the user's colleague
  // Lena Fischer") tells the profile whose the others about them are (memory/whose.ts).
  const staticRows = await profileSection(db, scope, true, PROFILE_STATIC_MAX * SECTION_READ_FACTOR);
  const dynamicRows = await profileSection(db, scope, false, PROFILE_DYNAMIC_MAX * SECTION_READ_FACTOR);
  const changes = await profileChanges(db, scope, LASTING_SLOTS, PROFILE_STATIC_MAX);
  const documents = await profileDocuments(db, scope, PROFILE_DOCUMENTS_MAX);
  const bucketRows = await Promise.all(chosen.map((b) => bucketCandidates(db, scope, b)));
  const contexts = await namespaceContexts(db, namespaceId);
  const user = userSubjects({
    supportingContext: contexts?.supportingContext ?? null,
    organizationalContext: contexts?.organizationalContext ?? null,
  });
  const others = otherPeople([...staticRows, ...dynamicRows, ...bucketRows.flatMap((b) => b.rows)], user);
  const users = (rows: readonly ProfileRow[]) => rows.filter((r) => isTheUsers(r, user, others));
  // A lasting slot's value told as an event ("joined Northwind", "moved to Braga") is a lasting fact.
  const changed = new Set(changes.map((r) => r.id));
  const lasting = [...users(staticRows), ...changes].sort(bySlot);
  return {
    // The user's own lasting facts, then one line for each document they keep (what it is).
    static: [...lasting.slice(0, PROFILE_STATIC_MAX - documents.length), ...documents].map(ref),
    dynamic: users(dynamicRows)
      .filter((r) => !changed.has(r.id))
      .slice(0, PROFILE_DYNAMIC_MAX)
      .map(ref),
    buckets: Object.fromEntries(
      chosen.map((b, i) => [b.name, classify(users(bucketRows[i]!.rows), bucketRows[i]!.match)]),
    ),
  };
}

/** Documents a profile names, one line each (what the document is, never its contents). */
const PROFILE_DOCUMENTS_MAX = 3;

/** The lasting slots a profile orders its static facts by: who the user is first. */
const SLOT_ORDER = [
  "name",
  "home",
  "work",
  "relationship",
  "children",
  "family",
  "pet",
  "education",
  "manager",
  "diet",
  "drink",
  "health",
  "vehicle",
  "language",
  "identity",
  "age",
  "schedule",
];
const LASTING_SLOTS = SLOTS.filter((s) => s.lasting).map((s) => s.name);

/** A static fact's place: by its slot (SLOT_ORDER, then favourites and likes, then the rest), stable otherwise. */
function slotRank(attribute: string | null): number {
  const at = attribute === null ? -1 : SLOT_ORDER.indexOf(attribute);
  if (at >= 0) return at;
  if (attribute?.startsWith("favorite")) return SLOT_ORDER.length;
  if (attribute?.startsWith("likes_") || attribute?.startsWith("dislikes_")) return SLOT_ORDER.length + 1;
  return SLOT_ORDER.length + 2;
}
const bySlot = (a: ProfileRow, b: ProfileRow) => slotRank(a.attribute) - slotRank(b.attribute);

const ref = (r: ProfileRow): Ref => ({ id: r.id, memory: r.memory });

// Words of bucket descriptions that say nothing about a topic.
const GENERIC = new Set(
  (
    "user users person people memory memories fact facts thing things information info about related relate " +
    "include includes including etc any all kind kinds type types detail details way ways also other " +
    "something anything everything stuff their them they his her he she"
  ).split(" "),
);

/**
 * Topic words a bucket's name brings with it: a bucket named like one of a group's words matches
 * memories holding any of them ("preferences" holds "loves jazz").
 */
const TOPICS: readonly string[] = [
  "preference prefer like love enjoy favorite favourite dislike hate fan adore",
  "work job career employer company colleague office profession manager hire",
  "home live city house apartment move neighborhood hometown",
  "family wife husband partner child children kid daughter son mother father sister brother parent married",
  "relationship friend partner boyfriend girlfriend date married engaged",
  "health doctor allergy allergic diet medication illness sick injury",
  "hobby hobbies sport music painting reading hiking play game",
  "goal plan intend aspire ambition",
  "education school university college degree study student graduate",
  "food eat cuisine restaurant cook meal dish vegetarian vegan",
  "travel trip visit vacation flight fly journey abroad",
  "project launch deadline milestone",
  "pet dog cat puppy kitten",
];

interface Topic {
  terms: QueryTerm[];
  stems: Set<string>;
}

let topicList: Topic[] | null = null;
const topics = (): Topic[] => {
  topicList ??= TOPICS.map((words) => {
    const terms = queryTerms(words);
    return { terms, stems: new Set(terms.map((t) => t.stems.join(" "))) };
  });
  return topicList;
};

const stemKey = (t: QueryTerm) => t.stems.join(" ");

/** What makes a memory belong to a bucket (see classify). */
interface BucketMatch {
  strong: Set<string>;
  weak: Set<string>;
  needed: number;
}

/** A bucket's candidates (memories holding one of its words, best first) and its words. */
async function bucketCandidates(
  db: Db,
  scope: ProfileScope,
  bucket: BucketDefinition,
): Promise<{ rows: ProfileRow[]; match: BucketMatch }> {
  const nameTerms = queryTerms(bucket.name.split(/[_-]+/).filter(Boolean).join(" "));
  const strongTerms = [...nameTerms];
  for (const topic of topics()) {
    if (nameTerms.some((t) => topic.stems.has(stemKey(t)))) strongTerms.push(...topic.terms);
  }
  const strong = new Set(strongTerms.map(stemKey));
  const described = queryTerms(bucket.description).filter((t) => !GENERIC.has(t.text));
  const weak = new Set(described.map(stemKey));
  const needed = weak.size <= 3 ? 1 : 2;
  const rows = await profileMemoriesHolding(
    db,
    scope,
    [...strongTerms, ...described].flatMap((t) => t.stems),
    BUCKET_CANDIDATES,
  );
  return { rows, match: { strong, weak, needed } };
}

/**
 * Lexical classification, deterministic: a memory belongs to a bucket when it holds one of the
 * topic words of the bucket's name, or enough of its description's words (one for a description of
 * at most three informative words, else two). Those holding the most of the words first.
 */
function classify(rows: readonly ProfileRow[], { strong, weak, needed }: BucketMatch): Ref[] {
  const out: Ref[] = [];
  // Candidates come best first and most are kept: they are tokenized a slice at a time, until
  // the bucket is full, not all 500 for 20.
  for (let at = 0; at < rows.length && out.length < PROFILE_BUCKET_MAX; at += STEM_SLICE) {
    const slice = rows.slice(at, at + STEM_SLICE);
    const stems = stemTexts(slice.map((r) => r.memory));
    slice.forEach((r, i) => {
      if (out.length >= PROFILE_BUCKET_MAX) return;
      const held = new Set(stems[i] ?? []);
      const strongHit = [...strong].some((s) => held.has(s));
      const weakHits = [...weak].filter((s) => held.has(s)).length;
      if (strongHit || weakHits >= needed) out.push(ref(r));
    });
  }
  return out;
}
