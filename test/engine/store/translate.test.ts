import { describe, expect, it } from "vitest";
import { translate } from "../../../src/engine/store/postgres/translate.js";

// The statements' results on PostgreSQL are the engine suite's to check (its PostgreSQL pass); this
// says which form each json_each takes, since the forms differ in cost and in what they can read.
describe("translate: json_each over a parameter", () => {
  it("reads an array of scalars through jsonb_array_elements_text when only its values are read", () => {
    const { text } = translate(
      "SELECT c.rowid FROM json_each(?) AS j CROSS JOIN chunks c ON c.rowid = j.value WHERE c.namespace_id = ?",
    );
    expect(text).toContain("FROM jsonb_array_elements_text(CAST($1 AS jsonb)) AS j(value) JOIN chunks c");
    expect(text).not.toContain("json_each");
  });

  it("reads an array of arrays through jsonb_array_elements when its values are only indexed", () => {
    const { text } = translate(
      "INSERT INTO t (a, b) SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j",
    );
    expect(text).toContain("FROM jsonb_array_elements(CAST($1 AS jsonb)) AS j(value)");
  });

  it("keeps the compat json_each when its key is read, or its values both whole and indexed", () => {
    const keyed = translate("SELECT j.key, j.value FROM json_each(?1) j");
    expect(keyed.text).toContain("FROM json_each($1) j");
    const mixed = translate("SELECT j.value, j.value ->> 0 FROM json_each(?1) j");
    expect(mixed.text).toContain("FROM json_each($1) j");
  });

  it("leaves json_each over a column (a filter's metadata path) alone", () => {
    const { text } = translate(
      "SELECT 1 FROM memories m WHERE EXISTS (SELECT 1 FROM json_each(m.metadata, '$.tags') t WHERE t.value = ?)",
    );
    expect(text).toContain("json_each(m.metadata, '$.tags') t");
  });
});
