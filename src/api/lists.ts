import { z } from "zod";
import { queryInt } from "./common.js";
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_PAGE_DEFAULT } from "./limits.js";

export const ListSort = z.enum(["createdAt", "updatedAt"], { error: "sort must be createdAt or updatedAt" });
export const ListOrder = z.enum(["asc", "desc"], { error: "order must be asc or desc" });

/** Pagination and sort of list endpoints: always in the query string. */
export const ListQuery = z.strictObject({
  page: queryInt("page", 1, Number.MAX_SAFE_INTEGER, LIST_PAGE_DEFAULT),
  limit: queryInt("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
  sort: ListSort.default("createdAt"),
  order: ListOrder.default("desc"),
});
export type ListQuery = z.input<typeof ListQuery>;
