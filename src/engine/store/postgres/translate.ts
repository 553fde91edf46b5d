/**
 * The store's SQL is written once, in SQLite's dialect. On PostgreSQL each statement is rewritten
 * mechanically when it is prepared (once per text and connection), and the functions and
 * operators SQLite has and PostgreSQL lacks come from the `memctx_compat` schema (compat.ts),
 * which the connection's search_path puts before pg_catalog. What this rewrites:
 * - `char(N)` becomes `chr(N)`;
 * - placeholders `?` and `?N` become `$N` (a bare `?` takes the largest number so far + 1, as in
 *   SQLite);
 * - `CROSS JOIN t ON c` (SQLite's way to pin the join order) becomes `JOIN t ON c`, and a cross
 *   join without ON gets `ON TRUE`;
 * - `a IS b` / `a IS NOT b` become IS [NOT] DISTINCT FROM (SQLite's null-safe comparison);
 * - `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`; `INSERT OR REPLACE` an upsert on the
 *   table's key;
 * - mixed-case aliases (`AS tfContext`) are quoted: PostgreSQL folds unquoted names to lower case;
 * - an INSERT of one row into a table whose key the caller may read (`lastInsertRowid`) returns it;
 * - `json_each(?) j` read only as `j.value ->> K` becomes jsonb_array_elements (parsed once), and
 *   read only as `j.value`, jsonb_array_elements_text.
 * Text inside string literals and quoted identifiers is left as it is.
 */
export interface Translated {
  text: string;
  /** The column an INSERT returns for `lastInsertRowid`, if any. */
  rowidColumn?: string;
}

/** Tables whose new key a caller reads from `run().lastInsertRowid`, and that key. */
const INSERTED_KEY: Record<string, string> = {
  jobs: "id",
  documents: "rowid",
  chunks: "rowid",
  memories: "rowid",
  profile_buckets: "id",
};

/** The conflict target of `INSERT OR REPLACE` per table: its primary key. */
const PRIMARY_KEY: Record<string, string[]> = {
  chunk_vectors: ["chunk_rowid"],
  memory_vectors: ["memory_rowid"],
};

export function translate(sql: string): Translated {
  // Split into code and quoted parts; only code is rewritten.
  const parts: { code: boolean; text: string }[] = [];
  const re = /'(?:[^']|'')*'|"(?:[^"]|"")*"/g;
  let last = 0;
  for (let m = re.exec(sql); m; m = re.exec(sql)) {
    if (m.index > last) parts.push({ code: true, text: sql.slice(last, m.index) });
    parts.push({ code: false, text: m[0] });
    last = m.index + m[0].length;
  }
  if (last < sql.length) parts.push({ code: true, text: sql.slice(last) });

  let max = 0;
  for (const p of parts) {
    if (!p.code) continue;
    p.text = p.text
      .replace(/\?(\d+)?/g, (_, n: string | undefined) => {
        const i = n ? Number(n) : max + 1;
        max = Math.max(max, i);
        return `$${i}`;
      })
      // A parameter only tested for NULL has no type PostgreSQL can infer.
      .replace(/(\$\d+)(\s+IS\s+(?:NOT\s+)?NULL\b)/gi, "$1::text$2")
      .replace(/\bIS\s+NOT\s+(?!NULL\b|TRUE\b|FALSE\b|DISTINCT\b)/gi, "IS DISTINCT FROM ")
      .replace(/\bIS\s+(?!NOT\b|NULL\b|TRUE\b|FALSE\b|DISTINCT\b)/gi, "IS NOT DISTINCT FROM ")
      // SQLite's char(N) (a character by code) is chr(N).
      .replace(/\bchar\(/g, "chr(")
      .replace(/\bAS\s+([A-Za-z_][A-Za-z0-9_]*)/g, (whole, name: string) =>
        /[a-z]/.test(name) && /[A-Z]/.test(name) ? `AS "${name}"` : whole,
      )
      .replace(
        /\bCROSS\s+JOIN\s+(\w+(?:\s*\([^()]*\))?(?:\s+(?:AS\s+)?(?!ON\b|WHERE\b|CROSS\b|JOIN\b|LEFT\b|INNER\b|ORDER\b|GROUP\b|UNION\b|LIMIT\b)\w+)?)(\s+ON\b)?/gi,
        (_, target: string, on: string | undefined) =>
          on ? `JOIN ${target}${on}` : `JOIN ${target} ON TRUE`,
      );
  }
  let text = parts.map((p) => p.text).join("");

  // `json_each($N) j` read only as `j.value` becomes a built-in set-returning function, not the
  // PL/pgSQL json_each (compat.ts): rows only read as `j.value ->> K` (a JSON array of arrays: the
  // store's bulk writes) become jsonb_array_elements, each row's array parsed once, not once per
  // column read; rows read as `j.value` alone (an array of rowids, ids or stems: most of a
  // search's statements) become jsonb_array_elements_text, the same text values at half the cost
  // (visibility of 80 chunk rowids 0.72 against 1.28 ms, of 640 4.2 against 7.6 ms, prepared).
  text = text.replace(/\bjson_each\((\$\d+)\)\s+(?:AS\s+)?(\w+)/g, (whole, param: string, alias: string) => {
    const uses = text.match(new RegExp(`\\b${alias}\\.\\w+(\\s*->>)?`, "g")) ?? [];
    if (uses.length === 0) return whole;
    if (uses.every((u) => /^\w+\.value\s*->>$/.test(u)))
      return `jsonb_array_elements(CAST(${param} AS jsonb)) AS ${alias}(value)`;
    if (uses.every((u) => /^\w+\.value$/.test(u)))
      return `jsonb_array_elements_text(CAST(${param} AS jsonb)) AS ${alias}(value)`;
    return whole;
  });

  const orIgnore = /^\s*INSERT\s+OR\s+IGNORE\s+INTO\b/i;
  if (orIgnore.test(text)) {
    text = appendBeforeReturning(text.replace(orIgnore, "INSERT INTO"), "ON CONFLICT DO NOTHING");
  }
  const orReplace = /^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)/i;
  const replace = orReplace.exec(text);
  if (replace) {
    const table = replace[1]!;
    const key = PRIMARY_KEY[table];
    if (!key) throw new Error(`INSERT OR REPLACE INTO ${table}: no primary key known for PostgreSQL`);
    const columns = replace[2]!.split(",").map((c) => c.trim());
    const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
    text = appendBeforeReturning(
      text.replace(/^\s*INSERT\s+OR\s+REPLACE\s+INTO/i, "INSERT INTO"),
      `ON CONFLICT (${key.join(", ")}) DO ${set.length ? `UPDATE SET ${set.join(", ")}` : "NOTHING"}`,
    );
  }
  const insert = /^\s*INSERT\s+INTO\s+(\w+)\b[^;]*\bVALUES\b/i.exec(text);
  const key = insert ? INSERTED_KEY[insert[1]!] : undefined;
  if (key && !/\bRETURNING\b/i.test(text)) {
    return { text: `${text.trimEnd()} RETURNING ${key} AS "__rowid"`, rowidColumn: "__rowid" };
  }
  return { text };
}

function appendBeforeReturning(text: string, clause: string): string {
  const at = text.search(/\bRETURNING\b/i);
  return at < 0 ? `${text.trimEnd()} ${clause}` : `${text.slice(0, at)}${clause} ${text.slice(at)}`;
}
