import type { Params } from "./connection.js";

/** Pagination and sort of list endpoints, as the contract's ListQuery parses them. */
export interface PageRequest {
  page: number;
  limit: number;
  sort: "createdAt" | "updatedAt";
  order: "asc" | "desc";
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** ORDER BY for table alias `a`; rowid breaks ties so pages never overlap. */
export function orderBy(alias: string, p: Pick<PageRequest, "sort" | "order">, hasUpdatedAt = true): string {
  const col = p.sort === "updatedAt" && hasUpdatedAt ? "updated_at" : "created_at";
  const dir = p.order === "asc" ? "ASC" : "DESC";
  return `${alias}.${col} ${dir}, ${alias}.rowid ${dir}`;
}

/**
 * `column` within one namespace, or within several (legacy lists span the namespaces a key may
 * use): a WHERE fragment, its parameter added to `p`.
 */
export function inNamespaces(column: string, ids: string | readonly string[], p: Params): string {
  return typeof ids === "string" ? `${column} = ${p.add(ids)}` : p.isIn(column, ids, "text");
}
