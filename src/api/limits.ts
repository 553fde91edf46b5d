/**
 * Every limit of the API as a named constant. The spec and its supplement are the source;
 * where they are silent, the value is ours and says so.
 */
export const NAMESPACE_PATTERN = /^[a-zA-Z0-9_:-]+$/;
export const NAMESPACE_MAX_LENGTH = 100;

export const DOCUMENT_ID_MAX_LENGTH = 255;
export const ENTITY_CONTEXT_MAX_LENGTH = 1500;
/** Not published for the namespace-level context; ours. */
export const NAMESPACE_CONTEXT_MAX_LENGTH = 10_000;
/** Not published for the organization-level context; ours. */
export const ORGANIZATION_CONTEXT_MAX_LENGTH = 10_000;

export const BATCH_MIN_DOCUMENTS = 1;
export const BATCH_MAX_DOCUMENTS = 600;

export const DELETE_DOCUMENT_IDS_MIN = 1;
export const DELETE_DOCUMENT_IDS_MAX = 100;
export const FORGET_MEMORY_IDS_MIN = 1;
export const FORGET_MEMORY_IDS_MAX = 500;

export const LIST_PAGE_DEFAULT = 1;
export const LIST_LIMIT_DEFAULT = 10;
export const LIST_LIMIT_MAX = 100;

export const RELATED_LIMIT_DEFAULT = 10;
export const RELATED_LIMIT_MAX = 100;

export const SEARCH_LIMIT_DEFAULT = 10;
export const SEARCH_LIMIT_MAX = 100;
export const SEARCH_THRESHOLD_DEFAULT = 0.3;

export const PROFILE_BUCKETS_MAX = 50;
export const BUCKET_PUT_MIN = 1;
export const BUCKET_PUT_MAX = 50;
export const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const BUCKET_NAME_MAX_LENGTH = 64;
export const BUCKET_DESCRIPTION_MAX_LENGTH = 2000;
/** Every organization starts with this organization-owned bucket. */
export const ORGANIZATION_BUCKET_PREFERENCES = "preferences";

export const FILTER_MAX_DEPTH = 5;
export const FILTER_OPERANDS_MIN = 1;
export const FILTER_OPERANDS_MAX = 200;
/**
 * Leaves (field comparisons) in one filter, all groups together. Not published; ours. Five levels
 * of 200 operands would be 200^5 leaves; five groups of 200 stay legal. Every leaf is evaluated
 * for every row a search or list reads, in one statement: 12,000 leaves over a namespace of wide
 * metadata held a PostgreSQL backend for seconds per statement (bench/guard/filter.ts).
 */
export const FILTER_LEAVES_MAX = 1_000;
/**
 * Characters of a leaf's string value: no stored metadata value is longer (METADATA_VALUE_MAX_LENGTH),
 * and a document's id, source or type is shorter. Ours.
 */
export const FILTER_VALUE_MAX_LENGTH = 4_096;
/**
 * Bytes of SQL that one filter may compile to (the statement's text, not its bound values, which
 * the limits above bound). Not published; ours: a filter within the other limits compiles to at
 * most ~270 KB (PostgreSQL, 1,000 leaves); a larger text is refused with 400 rather than sent to
 * the database to be parsed and planned.
 */
export const FILTER_SQL_MAX_BYTES = 512 * 1024;
export const FILTER_FIELD_PATTERN = /^[a-zA-Z0-9_.-]+$/;
/**
 * Characters in a filter's field name (a legacy filter's `key`). Not published; ours: a metadata
 * key is a short name, and each field is matched in SQL for every memory a search reads.
 */
export const FILTER_FIELD_MAX_LENGTH = 256;
/**
 * Levels of arrays and objects in a free-form JSON value (a connector's `config` and `selection`).
 * Not published; ours: a provider's settings nest a level or two, and storing a value means
 * writing it out recursively (JSON.stringify overflows the stack some thousands of levels down).
 */
export const JSON_VALUE_MAX_DEPTH = 32;

/**
 * A document's (or memory's) metadata, as a request sends it. Not published; ours. Metadata is
 * read by every filtered search and list, row by row: a document of 10,000 keys (128 KB) made each
 * filtered statement parse all of it per row.
 */
export const METADATA_KEYS_MAX = 256;
/** Characters of one metadata key: a filter names it as its field (FILTER_FIELD_MAX_LENGTH). */
export const METADATA_KEY_MAX_LENGTH = 256;
/** Characters of one string value, or of each string of an array value. */
export const METADATA_VALUE_MAX_LENGTH = 4_096;
/** Strings in one array value. */
export const METADATA_ARRAY_MAX_ITEMS = 256;
/** Bytes of the whole metadata object, as JSON in UTF-8. */
export const METADATA_MAX_BYTES = 32 * 1024;

/**
 * Characters of a search query (v5 and v4 search, v4 profile `q`, forget by meaning). Not
 * published; ours: a query is a question or a few sentences, and it is tokenized, expanded and
 * matched on the thread that answers requests (a 4 MB query held it for 4.9 s).
 */
export const QUERY_MAX_LENGTH = 4_000;

/** Files and fetched URLs. */
export const FILE_MAX_BYTES = 50 * 1024 * 1024;
/** A JSON request body above this answers 413. Not published; ours (600 batch items of ~50 KB fit). */
export const REQUEST_BODY_MAX_BYTES = 32 * 1024 * 1024;

export const OAUTH_LINK_TTL_MS = 60 * 60 * 1000;
export const CONNECTOR_DOCUMENT_LIMIT_MAX = 100_000;

/** POST /v4/memories: memories per request, and characters per memory (as the hosted service publishes). */
export const LEGACY_MEMORIES_MIN = 1;
export const LEGACY_MEMORIES_MAX = 100;
export const LEGACY_MEMORY_MAX_LENGTH = 10_000;
/** POST /v4/memories/forget-matching: default and most memories forgotten at once, and the default threshold. */
export const LEGACY_FORGET_MATCHING_MAX_DEFAULT = 100;
export const LEGACY_FORGET_MATCHING_MAX = 500;
export const LEGACY_FORGET_MATCHING_THRESHOLD_DEFAULT = 0.5;
/** Legacy search defaults (the spec's mapping: v5 changed them to hybrid and 0.3). */
export const LEGACY_SEARCH_MODE_DEFAULT = "memories";
export const LEGACY_SEARCH_THRESHOLD_DEFAULT = 0.6;
/** A connector syncs again this long after its last run, unless its `syncIntervalSeconds` says otherwise: daily. */
export const CONNECTOR_SYNC_INTERVAL_DEFAULT_SECONDS = 86_400;
/** The longest interval a connector may set: a year (0 turns scheduled syncs off). */
export const CONNECTOR_SYNC_INTERVAL_MAX_SECONDS = 31_536_000;
/**
 * A multipart upload's whole body: the file plus its text fields and part headers. Not published;
 * ours (fields are small: metadata, context of at most 1,500 characters).
 */
export const UPLOAD_FIELDS_MAX_BYTES = 1024 * 1024;
export const UPLOAD_BODY_MAX_BYTES = FILE_MAX_BYTES + UPLOAD_FIELDS_MAX_BYTES;
