/**
 * A read-only table of "key<TAB>value" lines looked up by binary search over its text, for the
 * tables search reads (WordNet expansions, stem ranks): a Map of their 30k+ keys held several
 * MiB more of the process's memory for as long as it runs, and took longer to build.
 */
export interface SortedLines {
  text: string;
  /** Where each line starts, the lines in ascending order of their keys (as JavaScript compares strings). */
  starts: Int32Array;
}

/** Indexes `text`'s lines; lines not in order of their keys are put in order first (shipped tables are). */
export function sortedLines(text: string): SortedLines {
  const t = indexLines(text);
  if (inOrder(t)) return t;
  const lines = text.split("\n").filter((l) => l !== "");
  const key = (line: string) => line.slice(0, line.indexOf("\t") >>> 0);
  return indexLines(lines.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).join("\n"));
}

/**
 * Indexes a table that memctx ships, which its build script wrote in key order: not checked again
 * at each start (a test checks every shipped table), since the check cost a cold start's first search 10-30 ms.
 */
export function shippedLines(text: string): SortedLines {
  return indexLines(text);
}

/** Whether each key comes after the one before: a binary search finds every key then. */
export function inOrder(t: SortedLines): boolean {
  for (let i = 1; i < t.starts.length; i++) if (!(keyAt(t, i - 1) < keyAt(t, i))) return false;
  return true;
}

/** The value of `key`, or undefined when no line has that key. */
export function lookUp(t: SortedLines, key: string): string | undefined {
  let lo = 0;
  let hi = t.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keyAt(t, mid);
    if (k < key) lo = mid + 1;
    else if (k > key) hi = mid - 1;
    else {
      const start = t.starts[mid]! + k.length;
      if (t.text[start] !== "\t") return undefined;
      const newline = t.text.indexOf("\n", start);
      return t.text.slice(start + 1, newline < 0 ? t.text.length : newline);
    }
  }
  return undefined;
}

function indexLines(text: string): SortedLines {
  const starts: number[] = [];
  for (let at = 0; at < text.length; ) {
    starts.push(at);
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    at = end + 1;
  }
  return { text, starts: Int32Array.from(starts) };
}

function keyAt(t: SortedLines, i: number): string {
  const start = t.starts[i]!;
  const newline = t.text.indexOf("\n", start);
  const end = newline < 0 ? t.text.length : newline;
  const tab = t.text.indexOf("\t", start);
  return t.text.slice(start, tab < 0 || tab > end ? end : tab);
}
