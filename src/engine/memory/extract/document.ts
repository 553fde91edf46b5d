/**
 * The shape of a plain-text reference document (a manual, a specification, a report): which lines
 * are structure rather than statements (headings, tables of contents, page furniture, reference
 * lists), which heading each offset sits under, and the document's title. Memories are drawn from
 * the statements only, each told with the heading and title it needs to be true on its own.
 */

export interface Heading {
  /** The heading's words, numbering and markup removed ("Retention"). */
  text: string;
  level: number;
  start: number;
}

export interface DocumentShape {
  /** The text with every structure line blanked (same length: offsets hold). */
  body: string;
  /** Headings in text order. */
  headings: Heading[];
  /** The document's title: its first heading, else null. */
  title: string | null;
  /** Long or sectioned: memories are chosen by salience and told with their context. */
  reference: boolean;
  /**
   * Where each of its units starts (a paragraph, a list's item): a sentence never runs from one
   * into the next, as a list's items, written without a final stop, would.
   */
  units: number[];
}

/** A text this long, or with this many headings, reads as a reference document, not a note. */
const REFERENCE_CHARS = 4_000;
const REFERENCE_HEADINGS = 3;

// "## 4.1 Retention", "4.1 Retention", "Appendix B. Further Reading", "Chapter 3: Setup".
const MARKDOWN_HEADING = /^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$/;
const NUMBERED_HEADING =
  /^\s*((?:\d+\.)*\d+\.?|[A-Z]\.|(?:appendix|chapter|part|section)\s+[\dA-Z]+[.:]?)\s+(\S.{0,80})$/i;
// A table of contents entry: dot leaders before a page number, or a section number and a wide gap
// before it ("2.1 Brokers      3"); a table's row ending in a number ("Retention      7") is none.
const TOC_ENTRY = /(?:\.{4,}|…{2,})\s*[\divxlc]+\s*$|^\s*(?:\d+\.)*\d+\.?\s+\S.*\s{3,}[\divxlc]+\s*$/i;
// "1. Open the portal", "2) Click Create": one level of numbering, as lists are written.
const LIST_ITEM = /^\s*\d+[.)]\s+\S/;
const SINGLE_NUMBER = /^\s*\d+[.)]?\s+\S/;
const TOC_HEADING = /^(?:table of )?contents$/i;
// "Page 3", "3 of 15", "- 3 -", "iv": a page number standing alone, or a running header holding one.
const PAGE_NUMBER = /^\s*(?:[-–—]\s*)?(?:page\s+)?(?:\d+|[ivxlc]+)(?:\s+(?:of|\/)\s+\d+)?(?:\s*[-–—])?\s*$/i;
const RUNNING_PAGE = /\bpage\s+\d+(?:\s+(?:of|\/)\s+\d+)?\s*$/i;
// Sections whose lines are citations, not facts about the document's subject.
const REFERENCE_SECTION =
  /^(?:references?|bibliography|works cited|further reading|citations|literature|endnotes|footnotes|acknowl?edge?ments)$/i;
// "[4] Author. Title. Venue, 2017." or "Author, A. et al. (2011). Title." or a bare address.
const CITATION =
  /^\s*(?:[-*•]\s*)?(?:\[\d+\]|\d+\.\s+[A-Z][\w'’-]+,\s+[A-Z]\.|[A-Z][\w'’-]+,\s+[A-Z]\.(?:\s?[A-Z]\.)*(?:,| et al\.| and)|https?:\/\/\S+\s*$)/;

// "- item", "* item", "• item", "+ item": a list's item (a numbered one too, among others: LIST_ITEM).
const BULLET = /^\s*(?:[-*•+]\s+\S|\d+[.)]\s+\S)/;
const BULLET_MARK = /^\s*(?:[-*•+]|\d+[.)])\s+/;
// "| Stage | Owner |", "|------|": a table's row.
const TABLE_ROW = /^\|.*\|$|^\|?\s*:?-{3,}/;
// An indented line of code, or one of shell commands and assignments.
const CODE_LINE =
  /^(?: {4,}|\t)\S|^\s*(?:\$ |>>> |make |npm |npx |git |docker |kubectl |dagster |pip |python )/;

function headingOf(line: string): { text: string; level: number } | null {
  const md = MARKDOWN_HEADING.exec(line);
  if (md) return { text: clean(md[2]!), level: md[1]!.length };
  // A numbered line is a heading only when it is short and not a sentence (no final period after words).
  const num = NUMBERED_HEADING.exec(line);
  if (num && line.trim().length <= 80 && !/[.:;,]$/.test(num[2]!.trim()) && /^[A-Z]/.test(num[2]!)) {
    return { text: clean(num[2]!), level: (num[1]!.match(/\d+/g)?.length ?? 1) + 1 };
  }
  return null;
}

/**
 * A first line that names what follows ("Checkout incident review", then its lines): short, no
 * sentence's end, and text after it. It is the title the lines below are told with.
 */
function titleLine(lines: { line: string }[], i: number): { text: string; level: number } | null {
  const line = lines[i]!.line.trim();
  if (line.length > 80 || line.split(/\s+/).length > 10 || /[.!?:;,]$/.test(line)) return null;
  if (!/^[\p{Lu}\d]/u.test(line) || !lines.slice(i + 1).some((l) => l.line.trim() !== "")) return null;
  return { text: clean(line), level: 1 };
}

/** "4.1 Retention" -> "Retention"; "Appendix B. Further Reading" -> "Further Reading". */
function clean(text: string): string {
  return text
    .replace(/^(?:(?:\d+\.)*\d+\.?|[A-Z]\.|(?:appendix|chapter|part|section)\s+[\dA-Z]+[.:]?)\s+/i, "")
    .replace(/[*_`]+/g, "")
    .trim();
}

/** Digits read alike, so "Page 3 of 15" and "Page 4 of 15" are the same running line. */
const furnitureKey = (line: string) => line.trim().toLowerCase().replace(/\d+/g, "#").replace(/\s+/g, " ");

export function documentShape(text: string, title: string | null = null): DocumentShape {
  const lines: { start: number; line: string }[] = [];
  let at = 0;
  for (const line of text.split("\n")) {
    lines.push({ start: at, line });
    at += line.length + 1;
  }
  // A line repeated on three or more pages is a running header or footer.
  const seen = new Map<string, number>();
  for (const { line } of lines) {
    if (line.trim().length === 0 || line.trim().length > 120) continue;
    const k = furnitureKey(line);
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  const headings: Heading[] = [];
  // Indexes of the lines that are structure, blanked in the body.
  const blanks = new Set<number>();
  const first = lines.findIndex((l) => l.line.trim() !== "");
  // While inside a table of contents or a reference list: the level that ends it.
  let skipping: number | null = null;
  // Inside a fenced code block.
  let fenced = false;
  // A document's parts that are no sentences: list items, table rows, code. Read as structure in
  // a reference document (its passages keep them, searchable); a short note's list is its content.
  const parts = new Set<number>();
  // A list's items: each a unit of its own, its marker no word.
  const items = new Set<number>();
  const listItem = (i: number) => LIST_ITEM.test(lines[i]?.line ?? "");
  for (const [i, { start, line }] of lines.entries()) {
    const trimmed = line.trim();
    if (/^(?:```|~~~)/.test(trimmed)) {
      fenced = !fenced;
      blanks.add(i);
      continue;
    }
    if (fenced) {
      parts.add(i);
      continue;
    }
    if (trimmed === "") continue;
    if (TABLE_ROW.test(trimmed) || CODE_LINE.test(line)) parts.add(i);
    else if (BULLET.test(line)) items.add(i);
    // A contents entry ("2.1 Brokers ...... 2") is no heading; a numbered step among others
    // ("1. Open the portal" then "2. Click Create") is a list item, a statement.
    const entry = TOC_ENTRY.test(trimmed);
    const heading =
      entry ||
      (!MARKDOWN_HEADING.test(line) && SINGLE_NUMBER.test(line) && (listItem(i - 1) || listItem(i + 1)))
        ? null
        : (headingOf(line) ?? (i === first ? titleLine(lines, i) : null));
    if (heading) {
      if (skipping !== null && heading.level <= skipping) skipping = null;
      blanks.add(i);
      if (skipping !== null) continue;
      if (TOC_HEADING.test(heading.text) || REFERENCE_SECTION.test(heading.text)) {
        skipping = heading.level;
        continue;
      }
      headings.push({ text: heading.text, level: heading.level, start });
      continue;
    }
    const furniture =
      PAGE_NUMBER.test(trimmed) ||
      RUNNING_PAGE.test(trimmed) ||
      TOC_ENTRY.test(trimmed) ||
      CITATION.test(trimmed) ||
      // Repeated, and not a sentence: a statement said on every line of a list is no header.
      (trimmed.length <= 120 && !/[.!?]$/.test(trimmed) && (seen.get(furnitureKey(line)) ?? 0) >= 3) ||
      trimmed.includes("\f");
    if (skipping !== null || furniture) blanks.add(i);
  }
  const reference = text.length >= REFERENCE_CHARS || headings.length >= REFERENCE_HEADINGS;
  if (reference) for (const i of parts) blanks.add(i);
  const body = lines
    .map((l, i) =>
      blanks.has(i)
        ? " ".repeat(l.line.length)
        : reference && items.has(i)
          ? l.line.replace(BULLET_MARK, (m) => " ".repeat(m.length))
          : l.line,
    )
    .join("\n");
  // Units: a list's item, or a paragraph (lines after a blank, a heading or an item).
  const units: number[] = [];
  let open = false;
  for (const [i, l] of lines.entries()) {
    const blank = blanks.has(i) || l.line.trim() === "";
    if (!blank && (!open || items.has(i))) units.push(l.start);
    open = !blank;
  }
  // The text's own first heading names it better than a stored title (often a file name).
  const docTitle = headings[0]?.text ?? title;
  return { body, headings, title: docTitle, reference, units: units.length > 0 ? units : [0] };
}

/** The heading an offset sits under (the nearest before it), null before the first. */
export function headingAt(shape: DocumentShape, offset: number): Heading | null {
  let found: Heading | null = null;
  for (const h of shape.headings) {
    if (h.start > offset) break;
    found = h;
  }
  return found;
}

/**
 * How many memories a reference document of this length gives at most: a few, about itself (what
 * it is, who owns it, when it runs, what was decided and when); its passages stay searchable as chunks. Grows
 * with the root of its length: a README of 5 KB gives 7, a manual of 60 KB 13.
 */
export function memoryBudget(chars: number): number {
  return Math.round(5 + Math.sqrt(chars / 1000));
}

// What a document says about itself, worth a memory first: what it is, who owns it, when it runs,
// what was decided and when.
const OWNERSHIP = /\b(?:owned by|maintained by|owners?|maintainers?|responsible for|led by|contact)\b/i;
const DECISION =
  /\b(?:decided|decision|chose|chosen|we use|switched|replaced|migrated|adopted|deprecated|introduced|launched|released)\b/i;
const DATED = /\b(?:19|20)\d{2}\b/;
const RECURS =
  /\b(?:every (?:night|day|morning|evening|hour|week|month|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|nightly|daily|hourly|weekly|monthly)\b.*\b(?:at \d{1,2}(?::\d{2})?|\d{1,2}:\d{2})\b|\b(?:at \d{1,2}:\d{2}).*\b(?:every|nightly|daily|hourly|weekly)\b/i;

/** How much a statement says about the document's subject itself (title: what the document is called). */
export function aboutItself(sentence: string, title: string | null): number {
  let score = 0;
  // What the document is about: its title without the words that say what kind of document it is
  // ("Harbor Queue Operator Manual" is about Harbor Queue).
  const name = title
    ?.replace(/[^\p{L}\p{N} ]/gu, "")
    .split(/\s+/)
    .filter((w) => !DOCUMENT_WORDS.has(w.toLowerCase()))
    .join(" ")
    .trim();
  if (
    name &&
    new RegExp(`^(?:the\\s+)?${name.replace(/\s+/g, "\\s+")}\\s+(?:is|are|was)\\b`, "iu").test(sentence)
  )
    score += 6;
  if (OWNERSHIP.test(sentence)) score += 5;
  if (RECURS.test(sentence)) score += 4;
  if (DECISION.test(sentence)) score += 3;
  if (DATED.test(sentence)) score += 2;
  return score;
}

/**
 * Whether a plain text's sentence is a fragment, not a statement: code or markup in it, a line of
 * a list or a changelog run together ("229). - 2025-02-03: Atlas: ..."), or cut off ("A failed run
 * between 22:00.", "... (MR.").
 */
export function isFragment(sentence: string): boolean {
  // A decision log's or changelog's date label ("2025-01: We chose Dagster") is read past.
  const s = sentence
    .trim()
    .replace(/^(?:19|20)\d{2}(?:-\d{2}){0,2}:\s+/, "")
    // A name in inline code is a word of the sentence ("the `ingest_sales` DAG picks up ...").
    .replace(/`([\w.:/-]{1,40})`/g, "$1");
  if (/[`|]|\*\*|\s#\s|^\W|^\d/.test(s)) return true;
  if ((s.match(/\(/g)?.length ?? 0) !== (s.match(/\)/g)?.length ?? 0)) return true;
  if ((s.match(/\s[-–]\s/g)?.length ?? 0) >= 2) return true;
  const last =
    s
      .replace(/[.!?…]+$/, "")
      .split(/\s+/)
      .at(-1)
      ?.toLowerCase() ?? "";
  return (
    /^(?:and|or|but|between|of|to|from|with|for|the|a|an|in|on|at|by|mr|e\.g|i\.e|vs)$/.test(last) ||
    (/\d:\d\d$/.test(last) && /\bbetween\b/i.test(s))
  );
}

// The document talking about itself or its layout ("see Section 4", "XML is mentioned in Section
// 2.1", "the figure below", "this chapter"): where something is written, not a fact of its subject.
const SELF_REFERENCE = [
  /\b(?:see(?: also)?|mentioned|described|explained|shown|listed|discussed|covered|defined|detailed|refer(?:red)? to|found)\s+(?:in\s+)?(?:the\s+)?(?:section|chapter|appendix|figure|fig\.|table|page|part)s?\b/i,
  /\b(?:section|chapter|appendix|figure|table)\s+[\dA-Z]+(?:\.\d+)*\b/,
  /\b(?:this|the next|the previous|the following|the later|the above|the below|these|later)\s+(?:section|chapter|appendix|manual|document|page|figure|table|step|paragraph|example|screenshot)s?\b/i,
  /\b(?:below|above|as follows|the following)\s*[.:]?\s*$/i,
];

/** Whether a sentence is about the document itself rather than its subject. */
export function selfReference(sentence: string): boolean {
  return SELF_REFERENCE.some((re) => re.test(sentence));
}

// Words that make a statement a rule or a fact worth keeping: requirements, defaults, limits.
const NORMATIVE =
  /\b(?:must|never|always|only|required?|requires|default(?:s|ed)?|at most|at least|maximum|minimum|limit|cannot|not supported|owns?|owned|led by|responsible|approv\w+|deprecated|replaced)\b/i;
// Openings that lean on the sentence before ("It writes", "This is", "Then continue").
const LEANING = /^(?:it|this|that|these|those|they|then|after that|here|there|also|so)\b/i;
// Numbers, versions, sizes, dates, ports, identifiers written with digits or code punctuation.
const VALUE = /\d|\b[a-z]+_[a-z_]+\b|\/[a-z]+\/|\b[A-Z]{2,}(?:_[A-Z]+)+\b/;

/**
 * How worth remembering a statement of a reference document is: values, names and rules count for
 * it; leaning on the sentence before, length and talk about the document itself count against it.
 */
export function salience(sentence: string, properNouns: number, opensSection: boolean): number {
  // A section's first statement usually says what the section is about.
  let score = opensSection ? 2 : 0;
  // A definition ("Harbor Queue is a durable message queue") says what something is.
  if (/^[\w\s-]{2,60}\b(?:is|are)\s+(?:a|an|the)\b|\bconsists? of\b/i.test(sentence)) score += 1;
  if (VALUE.test(sentence)) score += 2;
  score += Math.min(properNouns, 2);
  if (NORMATIVE.test(sentence)) score += 1;
  // A record's field ("Owner: Tomasz Nowak.", "Root cause: ...") is a fact by design, short or not.
  const field = /^[A-Z][\w -]{1,30}:\s+\S/.test(sentence);
  if (field) score += 3;
  if (LEANING.test(sentence)) score -= 3;
  const words = sentence.split(/\s+/).length;
  if (words < 5 && !field) score -= 1;
  if (words > 40) score -= 1;
  if (selfReference(sentence)) score -= 4;
  return score;
}

// Headings that name no subject: the title alone gives the context.
const GENERIC_HEADING =
  /^(?:introduction|overview|summary|background|general|faq|frequently asked questions|glossary|details?|misc(?:ellaneous)?|conclusions?|description|abstract|scope|purpose|definitions|terminology|notes|known issues|change ?log)$/i;
const STOP = new Set(
  "the a an and or of for to in on at by with from as is are be this that its their our your into per".split(
    " ",
  ),
);

// Words that say what kind of document it is, not what it is about.
const DOCUMENT_WORDS = new Set(
  "manual handbook guide specification spec documentation reference operator user notes overview introduction readme".split(
    " ",
  ),
);

const contentWords = (text: string): string[] =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    // Numbers say which, not what: "2025" in a date does not make "Incident 2025-07" said.
    .filter((w) => w.length > 2 && !STOP.has(w) && !/^\d+$/.test(w))
    .map((w) => w.replace(/(?:ies|es|s)$/, ""));

/**
 * The memory told with what it needs to be true on its own: the heading it sits under and the
 * document's title, each only when the memory does not already name what it is about.
 * "Owner: Tomasz Nowak." under "Incident 2025-07: duplicate payment events" of "Harbor Queue
 * Operator Manual" becomes "Harbor Queue Operator Manual (Incident 2025-07: duplicate payment
 * events): Owner: Tomasz Nowak."
 */
export function inContext(memory: string, heading: Heading | null, title: string | null): string {
  const said = new Set(contentWords(memory));
  // Named when at least half of the heading's or title's own words are said ("Every build runs"
  // does not say which build service).
  const missing = (text: string) => {
    const words = contentWords(text).filter((w) => !DOCUMENT_WORDS.has(w));
    return words.length > 0 && words.filter((w) => said.has(w)).length * 2 < words.length;
  };
  // A record's field ("Root cause: ...") is about the record its heading names, whatever it says.
  const field = /^[A-Z][\w -]{1,30}:\s+\S/.test(memory);
  const section =
    heading !== null &&
    heading.text !== title &&
    !GENERIC_HEADING.test(heading.text) &&
    (field || missing(heading.text))
      ? heading.text
      : null;
  const named =
    title !== null && missing(title) && (section === null || !holds(section, title)) ? title : null;
  if (named && section) return `${named} (${section}): ${memory}`;
  if (section) return `${section}: ${memory}`;
  if (named) return `${named}: ${memory}`;
  return memory;
}

/** Whether the heading already names what the title does (then the title adds nothing). */
function holds(section: string, title: string): boolean {
  const words = new Set(contentWords(section));
  const own = contentWords(title).filter((w) => !DOCUMENT_WORDS.has(w));
  return own.length > 0 && own.every((w) => words.has(w));
}
