/** Words that say someone is a person, or is someone's: the extractor and the profile share them. */

/** Nouns before a name that make it a person's ("my sister Alice", "our friend Bob"). */
export const PERSON_NOUNS: ReadonlySet<string> = new Set([
  "sister",
  "brother",
  "mom",
  "mother",
  "dad",
  "father",
  "son",
  "daughter",
  "friend",
  "wife",
  "husband",
  "partner",
  "boyfriend",
  "girlfriend",
  "cousin",
  "aunt",
  "uncle",
  "grandma",
  "grandpa",
  "grandmother",
  "grandfather",
  "colleague",
  "coworker",
  "boss",
  "neighbor",
  "neighbour",
  "roommate",
  "niece",
  "nephew",
  "kid",
  "child",
  "teacher",
  "mentor",
  "fiance",
  "fiancee",
  "manager",
  "teammate",
  "lead",
  "client",
  "customer",
  "doctor",
  "landlord",
  "coach",
  "classmate",
  "assistant",
  "report",
]);

/**
 * Someone a person has, besides PERSON_NOUNS: more relatives and roles, and pets (a pet's likes
 * are not its owner's either). "The user's CTO, Priya Raman" or "the user's dog Rex" is someone
 * other than the user.
 */
export const RELATION_NOUNS: ReadonlySet<string> = new Set([
  ...PERSON_NOUNS,
  ..."parent sibling spouse grandson granddaughter grandchild stepmother stepfather stepson stepdaughter in-law baby toddler".split(
    " ",
  ),
  ..."cofounder co-founder founder ceo cto cfo coo vp director supervisor employee intern contractor tenant therapist dentist lawyer accountant nanny babysitter ex".split(
    " ",
  ),
  ..."pet dog cat puppy kitten parrot hamster horse rabbit".split(" "),
]);
