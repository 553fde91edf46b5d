/**
 * Text that no store can keep: a NUL character (U+0000), which PostgreSQL's text refuses, and a
 * lone UTF-16 surrogate, which no UTF-8 encoding has (each database would store it as U+FFFD, a
 * change nobody asked for). Every string of a request is held to this, on both backends alike.
 */
export const INVALID_TEXT_RULE = "must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates";

/** Whether a string can be stored as it is. */
export const isStorableText = (s: string): boolean => !s.includes("\u0000") && s.isWellFormed();

/**
 * The path of the first string in `value` (its keys included) that cannot be stored, or undefined.
 * Walked with a stack of its own: a value may nest deeper than the call stack goes.
 */
export function findUnstorableText(value: unknown): (string | number)[] | undefined {
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  while (stack.length) {
    const { node, path } = stack.pop()!;
    if (typeof node === "string") {
      if (!isStorableText(node)) return path;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: [...path, i] });
    } else if (node !== null && typeof node === "object") {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        if (!isStorableText(k)) return [...path, k];
        stack.push({ node: v, path: [...path, k] });
      }
    }
  }
  return undefined;
}
