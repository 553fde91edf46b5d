import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AddDocumentBody,
  BATCH_MAX_DOCUMENTS,
  BatchAddBody,
  BatchAddResponse,
  BUCKET_DESCRIPTION_MAX_LENGTH,
  BUCKET_NAME_MAX_LENGTH,
  BUCKET_PUT_MAX,
  BucketsResponse,
  Connector,
  CreateConnectorResponse,
  DELETE_DOCUMENT_IDS_MAX,
  DeleteBucketsBody,
  DeleteDocumentsBody,
  DeleteDocumentsResponse,
  Document,
  describeIssues,
  ENTITY_CONTEXT_MAX_LENGTH,
  ErrorResponse,
  FILTER_VALUE_MAX_LENGTH,
  FORGET_MEMORY_IDS_MAX,
  ForgetMemoriesBody,
  ForgetResponse,
  ForgetSemanticBody,
  GetMemoryQuery,
  LegacyProfileBody,
  LegacySearchBody,
  LIST_LIMIT_MAX,
  ListQuery,
  ListResponse,
  METADATA_ARRAY_MAX_ITEMS,
  METADATA_KEY_MAX_LENGTH,
  METADATA_KEYS_MAX,
  METADATA_MAX_BYTES,
  METADATA_VALUE_MAX_LENGTH,
  Memory,
  NAMESPACE_MAX_LENGTH,
  Namespace,
  NamespaceRecord,
  NamespacesResponse,
  Organization,
  PageQuery,
  PROFILE_BUCKETS_MAX,
  ProfileBody,
  ProfileResponse,
  PutBucketsBody,
  QUERY_MAX_LENGTH,
  RELATED_LIMIT_MAX,
  SEARCH_LIMIT_MAX,
  SearchBody,
  SearchResponse,
} from "../../src/api/index.js";

const ok = (s: z.ZodType, v: unknown) =>
  expect(s.safeParse(v).success, JSON.stringify(v)?.slice(0, 200)).toBe(true);
const bad = (s: z.ZodType, v: unknown, message?: RegExp) => {
  const r = s.safeParse(v);
  expect(r.success, JSON.stringify(v)?.slice(0, 200)).toBe(false);
  // What a caller sees: describeIssues names the field and the rule.
  if (message) expect(describeIssues("body", r.error?.issues ?? [])).toMatch(message);
};
const ids = (n: number, p = "id") => Array.from({ length: n }, (_, i) => `${p}${i}`);
const names = (n: number) => Array.from({ length: n }, (_, i) => `bucket_${i}`);
const ts = { createdAt: "<timestamp>", updatedAt: "<timestamp>" };

describe("the spec's example shapes parse", () => {
  it("batch add response with a failed item", () => {
    ok(BatchAddResponse, {
      results: [
        { id: "<id>", status: "queued" },
        { id: "", status: "error", error: "<message>", details: "<details>", url: "<url>" },
      ],
      failed: 1,
      success: 1,
    });
  });

  it("error body with and without details", () => {
    ok(ErrorResponse, { error: "<message>" });
    ok(ErrorResponse, { error: "<message>", details: "<details>" });
    bad(ErrorResponse, { details: "<details>" });
  });

  it("document read with chunks and memories", () => {
    ok(Document, {
      id: "<id>",
      customId: "<custom id>",
      title: null,
      type: "text",
      summary: null,
      content: "<content>",
      url: null,
      source: null,
      metadata: { topic: "<topic>", n: 1, ok: true, tags: ["<a>"] },
      system: { status: "done", dreamingStatus: "dreaming", ...ts },
      chunks: [
        {
          id: "<id>",
          documentId: "<id>",
          position: 0,
          content: "<chunk>",
          type: "text",
          system: { createdAt: "<t>" },
        },
      ],
      memories: [{ id: "<id>", memory: "<fact>" }],
    });
    bad(Document, {
      id: "<id>",
      type: "text",
      metadata: {},
      system: { status: "stuck", dreamingStatus: "done", ...ts },
    });
  });

  it("memory read with related memories and its document", () => {
    ok(Memory, {
      id: "<id>",
      memory: "<fact>",
      metadata: {},
      isStatic: false,
      isInference: false,
      isLatest: true,
      isForgotten: false,
      version: 2,
      system: ts,
      included: {
        related: { parents: [{ id: "<p>", memory: "<older>" }], children: [], siblings: [] },
        document: { id: "<doc>" },
      },
    });
  });

  it("list, search, profile, buckets, forget and delete responses", () => {
    ok(ListResponse, {
      documents: [],
      chunks: [],
      memories: [],
      pagination: { currentPage: 1, totalPages: 1 },
    });
    ok(SearchResponse, {
      results: [
        {
          id: "<id>",
          memory: "<fact>",
          similarity: 0.8,
          included: { related: { parents: [], children: [] } },
        },
        { id: "<id>", chunk: "<text>", similarity: 0.5 },
      ],
      searchTime: 12,
    });
    ok(ProfileResponse, {
      profile: { static: [{ id: "<id>", memory: "<fact>" }], dynamic: [], buckets: { work: [] } },
    });
    ok(BucketsResponse, { buckets: { preferences: "<description>" } });
    ok(ForgetResponse, {
      count: 1,
      matches: [{ id: "<id>", memory: "<fact>" }],
      errors: [{ id: "<id>", error: "<e>" }],
    });
    ok(DeleteDocumentsResponse, { count: 1, errors: [{ id: "<id>", error: "<e>" }] });
  });

  it("namespaces, organization and connectors", () => {
    ok(NamespacesResponse, {
      namespaces: [
        { id: "<id>", namespace: "alice", documentCount: 1, memoryCount: 2, description: null, system: ts },
      ],
      pagination: { currentPage: 1, totalPages: 1 },
    });
    ok(NamespaceRecord, {
      namespace: "alice",
      supportingContext: null,
      documentCount: 0,
      memoryCount: 0,
      system: ts,
    });
    ok(Organization, { organizationalContext: "<context>", namespaceCount: 3 });
    ok(CreateConnectorResponse, { id: "<id>", authorization: { url: "<url>", expiresAt: "<t>" } });
    ok(CreateConnectorResponse, { id: "<id>", authorization: null });
    ok(Connector, {
      id: "<id>",
      provider: "web-crawler",
      config: { startUrl: "<url>" },
      latestRun: { id: "<run>", error: "<e>", system: { status: "failed" } },
      picker: { url: "<url>" },
    });
  });
});

describe("each limit accepts its bound and rejects one past it", () => {
  it(`namespace: 1..${NAMESPACE_MAX_LENGTH} characters of ^[a-zA-Z0-9_:-]+$`, () => {
    ok(Namespace, "a".repeat(NAMESPACE_MAX_LENGTH));
    bad(Namespace, "a".repeat(NAMESPACE_MAX_LENGTH + 1), /at most 100/);
    ok(Namespace, "Team_1:alice-2");
    bad(Namespace, "", /1 to 100/);
    for (const s of ["a b", "a/b", "a.b", "ä", "a?"]) bad(Namespace, s, /must match/);
  });

  it(`document delete ids: 1..${DELETE_DOCUMENT_IDS_MAX}`, () => {
    ok(DeleteDocumentsBody, { ids: ids(1) });
    ok(DeleteDocumentsBody, { ids: ids(DELETE_DOCUMENT_IDS_MAX) });
    bad(DeleteDocumentsBody, { ids: ids(DELETE_DOCUMENT_IDS_MAX + 1) }, /at most 100/);
    bad(DeleteDocumentsBody, { ids: [] }, /at least 1/);
  });

  it(`forget ids: 1..${FORGET_MEMORY_IDS_MAX}`, () => {
    ok(ForgetMemoriesBody, { ids: ids(FORGET_MEMORY_IDS_MAX) });
    bad(ForgetMemoriesBody, { ids: ids(FORGET_MEMORY_IDS_MAX + 1) }, /at most 500/);
    bad(ForgetMemoriesBody, { ids: [] }, /at least 1/);
  });

  it(`batch documents: 1..${BATCH_MAX_DOCUMENTS}, as strings or objects`, () => {
    ok(BatchAddBody, { documents: ids(BATCH_MAX_DOCUMENTS) });
    ok(BatchAddBody, {
      documents: ids(BATCH_MAX_DOCUMENTS).map((content) => ({ content, customId: content })),
    });
    bad(
      BatchAddBody,
      { documents: ids(BATCH_MAX_DOCUMENTS + 1) },
      /^documents: documents takes at most 600 items$/,
    );
    bad(
      BatchAddBody,
      { documents: ids(BATCH_MAX_DOCUMENTS + 1).map((content) => ({ content })) },
      /at most 600/,
    );
    bad(BatchAddBody, { documents: [] }, /^documents: documents needs at least 1 item$/);
    bad(BatchAddBody, { documents: ["x"], content: "not null" });
    bad(BatchAddBody, { documents: ["x"], containerTag: "bad tag" }, /must match/);
  });

  it(`list limit: 1..${LIST_LIMIT_MAX} (query strings coerce)`, () => {
    ok(ListQuery, { limit: 1 });
    ok(ListQuery, { limit: LIST_LIMIT_MAX });
    ok(ListQuery, { limit: "100" });
    bad(ListQuery, { limit: LIST_LIMIT_MAX + 1 }, /at most 100/);
    bad(ListQuery, { limit: 0 }, /at least 1/);
    bad(ListQuery, { limit: "2.5" }, /integer/);
    bad(ListQuery, { sort: "title" });
    expect(ListQuery.parse({})).toEqual({ page: 1, limit: 10, sort: "createdAt", order: "desc" });
    ok(PageQuery, { limit: LIST_LIMIT_MAX });
    bad(PageQuery, { limit: LIST_LIMIT_MAX + 1 });
  });

  it(`relatedLimit: 1..${RELATED_LIMIT_MAX}`, () => {
    ok(GetMemoryQuery, { relatedLimit: 1 });
    ok(GetMemoryQuery, { relatedLimit: RELATED_LIMIT_MAX });
    bad(GetMemoryQuery, { relatedLimit: RELATED_LIMIT_MAX + 1 }, /at most 100/);
    bad(GetMemoryQuery, { relatedLimit: 0 }, /at least 1/);
    expect(GetMemoryQuery.parse({ include: "related,documents" }).include).toEqual(["related", "documents"]);
  });

  it(`search limit 1..${SEARCH_LIMIT_MAX} and threshold 0..1`, () => {
    ok(SearchBody, { query: "q", limit: 1, threshold: 0 });
    ok(SearchBody, { query: "q", limit: SEARCH_LIMIT_MAX, threshold: 1 });
    bad(SearchBody, { query: "q", limit: SEARCH_LIMIT_MAX + 1 }, /at most 100/);
    bad(SearchBody, { query: "q", limit: 0 }, /at least 1/);
    bad(SearchBody, { query: "q", threshold: 1.01 }, /between 0 and 1/);
    bad(SearchBody, { query: "q", threshold: -0.01 }, /between 0 and 1/);
    bad(SearchBody, { query: " " }, /must not be empty/);
    expect(SearchBody.parse({ query: "q", rerank: true }).rerank).toBe("order");
  });

  it(`search queries: at most ${QUERY_MAX_LENGTH} characters, on every route that takes one`, () => {
    const at = "q".repeat(QUERY_MAX_LENGTH);
    const past = `${at}q`;
    ok(SearchBody, { query: at });
    bad(SearchBody, { query: past }, /^query: query must be at most 4000 characters$/);
    ok(ForgetSemanticBody, { query: at, dryRun: true });
    bad(ForgetSemanticBody, { query: past, dryRun: true }, /^query: query must be at most 4000/);
    ok(LegacySearchBody, { q: at });
    bad(LegacySearchBody, { q: past }, /^q: q must be at most 4000/);
    ok(LegacyProfileBody, { containerTag: "t", q: at });
    bad(LegacyProfileBody, { containerTag: "t", q: past }, /^q: q must be at most 4000/);
  });

  it(`metadata: at most ${METADATA_KEYS_MAX} keys, ${METADATA_KEY_MAX_LENGTH}-character keys, ${METADATA_VALUE_MAX_LENGTH}-character values, ${METADATA_MAX_BYTES} bytes`, () => {
    const keys = (n: number) => Object.fromEntries(ids(n, "k").map((k) => [k, 1]));
    ok(AddDocumentBody, { content: "c", metadata: keys(METADATA_KEYS_MAX) });
    bad(
      AddDocumentBody,
      { content: "c", metadata: keys(METADATA_KEYS_MAX + 1) },
      /^metadata: holds at most 256 keys/,
    );
    bad(
      AddDocumentBody,
      { content: "c", filterByMetadata: keys(METADATA_KEYS_MAX + 1) },
      /^filterByMetadata: holds/,
    );
    ok(AddDocumentBody, { content: "c", metadata: { ["k".repeat(METADATA_KEY_MAX_LENGTH)]: 1 } });
    bad(
      AddDocumentBody,
      { content: "c", metadata: { ["k".repeat(METADATA_KEY_MAX_LENGTH + 1)]: 1 } },
      /a key must be at most 256 characters/,
    );
    ok(AddDocumentBody, { content: "c", metadata: { a: "v".repeat(METADATA_VALUE_MAX_LENGTH) } });
    bad(
      AddDocumentBody,
      { content: "c", metadata: { a: "v".repeat(METADATA_VALUE_MAX_LENGTH + 1) } },
      /^metadata\.a: a value must be at most 4096 characters$/,
    );
    bad(
      AddDocumentBody,
      { content: "c", metadata: { a: ["x", "v".repeat(METADATA_VALUE_MAX_LENGTH + 1)] } },
      /^metadata\.a\.1: a value must be at most 4096/,
    );
    ok(AddDocumentBody, { content: "c", metadata: { a: ids(METADATA_ARRAY_MAX_ITEMS) } });
    bad(
      AddDocumentBody,
      { content: "c", metadata: { a: ids(METADATA_ARRAY_MAX_ITEMS + 1) } },
      /an array holds at most 256 strings/,
    );
    // Within each rule above, but too large in all.
    const big = Object.fromEntries(ids(10, "k").map((k) => [k, "v".repeat(METADATA_VALUE_MAX_LENGTH)]));
    bad(AddDocumentBody, { content: "c", metadata: big }, /^metadata: must be at most 32768 bytes as JSON/);
    bad(
      BatchAddBody,
      { documents: [{ content: "c", metadata: big }] },
      /^documents\.0\.metadata: must be at most/,
    );
    // What is stored comes back as it is: records are not held to a request's limits.
    ok(Document, {
      id: "d",
      type: "text",
      metadata: big,
      system: { status: "done", dreamingStatus: "done", ...ts },
    });
  });

  it(`filter values: at most ${FILTER_VALUE_MAX_LENGTH} characters`, () => {
    const leaf = (value: string) => ({ query: "q", filter: { field: "a", operator: "contains", value } });
    ok(SearchBody, leaf("v".repeat(FILTER_VALUE_MAX_LENGTH)));
    bad(
      SearchBody,
      leaf("v".repeat(FILTER_VALUE_MAX_LENGTH + 1)),
      /^filter\.value: value must be at most 4096/,
    );
  });

  it(`entityContext / supportingContext: at most ${ENTITY_CONTEXT_MAX_LENGTH} characters`, () => {
    const at = "x".repeat(ENTITY_CONTEXT_MAX_LENGTH);
    const past = "x".repeat(ENTITY_CONTEXT_MAX_LENGTH + 1);
    ok(AddDocumentBody, { content: "c", supportingContext: at });
    bad(AddDocumentBody, { content: "c", supportingContext: past }, /at most 1500/);
    ok(AddDocumentBody, { content: "c", entityContext: at });
    bad(AddDocumentBody, { content: "c", entityContext: past }, /at most 1500/);
    bad(AddDocumentBody, { content: "c", entityContext: "a", supportingContext: "b" }, /not both/);
    ok(BatchAddBody, { documents: ["x"], entityContext: at });
    bad(BatchAddBody, { documents: ["x"], entityContext: past });
  });

  it(`profile buckets: at most ${PROFILE_BUCKETS_MAX} unique names`, () => {
    ok(ProfileBody, { buckets: names(PROFILE_BUCKETS_MAX) });
    bad(ProfileBody, { buckets: names(PROFILE_BUCKETS_MAX + 1) }, /at most 50/);
    bad(ProfileBody, { buckets: ["work", "work"] }, /unique/);
    bad(ProfileBody, { q: "no longer accepted" });
  });

  it(`bucket PUT: 1..${BUCKET_PUT_MAX} entries`, () => {
    const map = (n: number) => Object.fromEntries(names(n).map((n) => [n, "description"]));
    ok(PutBucketsBody, { buckets: map(1) });
    ok(PutBucketsBody, { buckets: map(BUCKET_PUT_MAX) });
    bad(PutBucketsBody, { buckets: map(BUCKET_PUT_MAX + 1) }, /at most 50/);
    bad(PutBucketsBody, { buckets: {} }, /at least 1/);
  });

  it(`bucket names: ^[a-z0-9][a-z0-9_-]*$, at most ${BUCKET_NAME_MAX_LENGTH} characters`, () => {
    const put = (name: string) => ({ buckets: { [name]: "d" } });
    ok(PutBucketsBody, put("a".repeat(BUCKET_NAME_MAX_LENGTH)));
    bad(
      PutBucketsBody,
      put("a".repeat(BUCKET_NAME_MAX_LENGTH + 1)),
      /^buckets\.a+: bucket names are at most 64/,
    );
    ok(PutBucketsBody, put("0work_life-balance"));
    for (const n of ["Work", "_work", "-work", "work life", "wörk"]) bad(PutBucketsBody, put(n), /match/);
    bad(DeleteBucketsBody, { buckets: ["Work"] }, /match/);
    bad(DeleteBucketsBody, { buckets: [] }, /at least 1/);
    bad(DeleteBucketsBody, { buckets: ["a", "a"] }, /unique/);
  });

  it(`bucket descriptions: at most ${BUCKET_DESCRIPTION_MAX_LENGTH} characters`, () => {
    ok(PutBucketsBody, { buckets: { work: "d".repeat(BUCKET_DESCRIPTION_MAX_LENGTH) } });
    bad(PutBucketsBody, { buckets: { work: "d".repeat(BUCKET_DESCRIPTION_MAX_LENGTH + 1) } }, /at most 2000/);
  });
});

describe("error details name the field and the rule inside unions and record keys", () => {
  it("points into the filter branch that was meant", () => {
    const r = SearchBody.safeParse({
      query: "q",
      filter: { operator: "and", operands: [{ field: "n", operator: "gt", value: "3" }] },
    });
    expect(describeIssues("body", r.error?.issues ?? [])).toBe(
      "filter.operands.0.value: Invalid input: expected number, received string",
    );
  });

  it("names the rule a bucket name breaks", () => {
    const r = PutBucketsBody.safeParse({ buckets: { "Bad Name": "d" } });
    expect(describeIssues("body", r.error?.issues ?? [])).toBe(
      "buckets.Bad Name: bucket names match ^[a-z0-9][a-z0-9_-]*$",
    );
  });

  it("keeps the union's own message when no branch came closer than another", () => {
    const r = AddDocumentBody.safeParse({ content: "x", metadata: { a: { nested: 1 } } });
    expect(describeIssues("body", r.error?.issues ?? [])).toBe("metadata.a: Invalid input");
  });
});
