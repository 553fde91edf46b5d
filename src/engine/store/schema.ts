import type { DatabaseSync } from "node:sqlite";

/**
 * The engine's SQLite schema as a `user_version` ladder: migration N (1-based) moves the file from
 * version N-1 to N. Append new steps; never edit a step that has shipped.
 *
 * Conventions every store module follows (the search, memory and connector code relies on them):
 * - service ids are prefixed random strings (doc_, chk_, mem_, ns_, org_, key_, con_, run_);
 *   times are ISO strings from `new Date().toISOString()` (they sort as text);
 * - searched tables (chunks, memories) declare `rowid INTEGER PRIMARY KEY` explicitly, so rowids
 *   survive VACUUM; the search index (search_*, migrations 2 and 5) is kept in sync by triggers, one
 *   space per namespace and corpus, so no statistic crosses namespaces; a unit's `context` (the
 *   turns around it) is indexed apart from its own text;
 * - vectors are Float32 BLOBs keyed by the owner's rowid and deleted with it;
 * - every content row carries `namespace_id`: every query of content is scoped by it;
 * - a document's chunks are visible to search only while `documents.status = 'done'`.
 */
export const migrations: readonly string[] = [
  // 1: the whole v5 model
  `
  CREATE TABLE organizations (
    id                     TEXT PRIMARY KEY,            -- org_...
    name                   TEXT NOT NULL UNIQUE,        -- 'local' for the embedded engine's own organization
    organizational_context TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
  );

  -- Bearer keys: only the sha256 (hex) of a key is stored. 'prefix' is the key's first characters,
  -- shown by 'memctx keys list' and accepted by 'memctx keys revoke'.
  CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,                   -- key_...
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    key_hash        TEXT NOT NULL UNIQUE,
    prefix          TEXT NOT NULL,
    namespaces      TEXT,                               -- JSON array of allowed namespace names; NULL = all
    created_at      TEXT NOT NULL,
    last_used_at    TEXT,
    revoked_at      TEXT
  );

  CREATE TABLE namespaces (
    id                 TEXT PRIMARY KEY,                -- ns_...
    organization_id    TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    supporting_context TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    UNIQUE (organization_id, name)
  );

  CREATE TABLE documents (
    rowid              INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,            -- doc_...
    namespace_id       TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    custom_id          TEXT,                            -- caller id, unique per namespace
    content            TEXT NOT NULL,                   -- as sent (text or a URL)
    content_hash       TEXT NOT NULL,                   -- sha256 of content: identical re-sends are not reprocessed
    text               TEXT,                            -- resolved text (after fetching / conversion)
    format             TEXT NOT NULL DEFAULT 'plain',   -- 'plain' | 'conversation'
    title              TEXT,
    type               TEXT NOT NULL DEFAULT 'text',    -- DocumentType
    url                TEXT,
    source             TEXT,                            -- 'api', or a connector provider name
    summary            TEXT,
    metadata           TEXT NOT NULL DEFAULT '{}',      -- JSON, flat
    document_date      TEXT,                            -- 'date' / 'documentDate' as sent
    supporting_context TEXT,                            -- 'supportingContext' / 'entityContext'
    filter_by_metadata TEXT,                            -- JSON or NULL
    task_type          TEXT NOT NULL DEFAULT 'memory',  -- 'memory' | 'superrag'
    dreaming           TEXT NOT NULL DEFAULT 'dynamic', -- 'dynamic' | 'instant'
    status             TEXT NOT NULL,                   -- DocumentStatus
    dreaming_status    TEXT NOT NULL,                   -- 'dreaming' | 'done'
    error              TEXT,
    generation         INTEGER NOT NULL DEFAULT 1,      -- bumped by each upsert; stale jobs check it
    connector_id       TEXT,                            -- set when a connector imported it
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
  );
  CREATE UNIQUE INDEX documents_custom_id ON documents(namespace_id, custom_id) WHERE custom_id IS NOT NULL;
  CREATE INDEX documents_namespace_created ON documents(namespace_id, created_at);
  CREATE INDEX documents_namespace_updated ON documents(namespace_id, updated_at);
  CREATE INDEX documents_connector ON documents(connector_id) WHERE connector_id IS NOT NULL;

  CREATE TABLE chunks (
    rowid        INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,                  -- chk_...
    document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    namespace_id TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    content      TEXT NOT NULL,                         -- exactly the document text's [start_offset, end_offset)
    type         TEXT NOT NULL DEFAULT 'text',
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    label        TEXT,                                  -- '[8 May 2023]': the document's day when it has a date
    speaker      TEXT,                                  -- a conversation turn's role, lowercased; NULL otherwise
    context      TEXT NOT NULL DEFAULT '',              -- the turns around it (3 each side), indexed at a lower weight
    created_at   TEXT NOT NULL,
    -- What a search hit returns and what the index holds: the content after its label.
    text         TEXT GENERATED ALWAYS AS (CASE WHEN label IS NULL THEN content ELSE label || ' ' || content END) VIRTUAL
  );
  CREATE INDEX chunks_document ON chunks(document_id, position);
  CREATE INDEX chunks_namespace_created ON chunks(namespace_id, created_at);
  -- The namespace's speakers, found by a prefix seek ("mel" names Melanie) when a query names one.
  CREATE INDEX chunks_namespace_speaker ON chunks(namespace_id, speaker) WHERE speaker IS NOT NULL;

  -- Search indexes (chunks and memories alike) have two columns: the unit's text, and the text
  -- around it (its neighbouring turns), which search weighs lower (bm25(fts, 1.0, 0.3)).
  -- External content: the index stores no second copy of the texts; the triggers hand it the
  -- exact values they index (the delete command must repeat them), and 'rebuild' or
  -- 'integrity-check' read them back from the table's columns of the same names.
  CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, context, content='chunks', content_rowid='rowid', tokenize='porter unicode61'
  );
  CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, context) VALUES (new.rowid, new.text, new.context);
  END;
  CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, context) VALUES ('delete', old.rowid, old.text, old.context);
  END;
  CREATE TRIGGER chunks_fts_update AFTER UPDATE OF content, label, context ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, context) VALUES ('delete', old.rowid, old.text, old.context);
    INSERT INTO chunks_fts(rowid, text, context) VALUES (new.rowid, new.text, new.context);
  END;

  CREATE TABLE chunk_vectors (
    chunk_rowid INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    embedding   BLOB NOT NULL                           -- Float32Array bytes
  );

  CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,              -- mem_...
    namespace_id     TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    memory           TEXT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}',        -- JSON: the source document's metadata
    is_static        INTEGER NOT NULL DEFAULT 0,
    is_inference     INTEGER NOT NULL DEFAULT 0,
    is_latest        INTEGER NOT NULL DEFAULT 1,
    is_forgotten     INTEGER NOT NULL DEFAULT 0,
    version          INTEGER NOT NULL DEFAULT 1,
    parent_memory_id TEXT,
    root_memory_id   TEXT,
    forget_after     TEXT,
    forget_reason    TEXT,
    subject          TEXT,
    attribute        TEXT,
    event_date       TEXT,
    document_id      TEXT,                              -- latest source document (no FK: see memory_sources)
    memory_key       TEXT,                              -- hash of the normalized text: a repeated fact is found by equality
    speaker          TEXT,                              -- who said its source turn, lowercased; NULL outside conversations
    context          TEXT NOT NULL DEFAULT '',          -- '[day]' and its source turn with 3 turns each side
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
  );
  CREATE INDEX memories_namespace_created ON memories(namespace_id, created_at);
  CREATE INDEX memories_namespace_subject ON memories(namespace_id, subject, attribute);
  -- Relation detection's look-ups of the latest memories of a subject (and attribute), newest first.
  CREATE INDEX memories_latest_subject ON memories(namespace_id, subject, created_at) WHERE is_latest = 1;
  CREATE INDEX memories_latest_attribute ON memories(namespace_id, subject, attribute, created_at) WHERE is_latest = 1;
  CREATE INDEX memories_latest_key ON memories(namespace_id, memory_key, created_at) WHERE is_latest = 1;
  CREATE INDEX memories_document ON memories(document_id);

  CREATE VIRTUAL TABLE memories_fts USING fts5(
    memory, context, content='memories', content_rowid='rowid', tokenize='porter unicode61'
  );
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, memory, context) VALUES (new.rowid, new.memory, new.context);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, memory, context) VALUES ('delete', old.rowid, old.memory, old.context);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF memory, context ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, memory, context) VALUES ('delete', old.rowid, old.memory, old.context);
    INSERT INTO memories_fts(rowid, memory, context) VALUES (new.rowid, new.memory, new.context);
  END;

  CREATE TABLE memory_vectors (
    memory_rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
    model        TEXT NOT NULL,
    embedding    BLOB NOT NULL
  );

  -- from_id (newer) updates | extends | derives to_id (older).
  CREATE TABLE memory_relations (
    from_id    TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    to_id      TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    relation   TEXT NOT NULL CHECK (relation IN ('updates', 'extends', 'derives')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (from_id, to_id, relation)
  );
  CREATE INDEX memory_relations_to ON memory_relations(to_id);

  -- Every document a memory came from. Deleting a document deletes the memories left without a source.
  CREATE TABLE memory_sources (
    memory_id   TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    start_offset INTEGER,
    end_offset   INTEGER,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (memory_id, document_id)
  );
  CREATE INDEX memory_sources_document ON memory_sources(document_id);

  -- The durable job queue, shared by every process on this data directory. A worker claims a job
  -- atomically (state 'running' + lease_until); a job whose lease expired is claimed again.
  CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,                         -- 'document' (process one document), others by owners
    document_id  TEXT REFERENCES documents(id) ON DELETE CASCADE,
    namespace_id TEXT REFERENCES namespaces(id) ON DELETE CASCADE,
    payload      TEXT NOT NULL DEFAULT '{}',            -- JSON
    state        TEXT NOT NULL DEFAULT 'queued',        -- 'queued' | 'running' | 'failed' (done jobs are deleted)
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    run_after    TEXT NOT NULL,                         -- not before (retry backoff)
    lease_until  TEXT,
    lease_owner  TEXT,
    error        TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
  );
  CREATE INDEX jobs_ready ON jobs(state, id);
  CREATE INDEX jobs_lease ON jobs(state, lease_until);
  CREATE INDEX jobs_document ON jobs(document_id);

  -- Organization-owned buckets have namespace_id NULL; every organization starts with 'preferences'.
  CREATE TABLE profile_buckets (
    id              INTEGER PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    namespace_id    TEXT REFERENCES namespaces(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
  );
  CREATE UNIQUE INDEX profile_buckets_organization ON profile_buckets(organization_id, name)
    WHERE namespace_id IS NULL;
  CREATE UNIQUE INDEX profile_buckets_namespace ON profile_buckets(namespace_id, name)
    WHERE namespace_id IS NOT NULL;

  CREATE TABLE connectors (
    id                       TEXT PRIMARY KEY,          -- con_...
    organization_id          TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    namespace_id             TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    provider                 TEXT NOT NULL,
    state                    TEXT NOT NULL,             -- 'pending' | 'connected' | 'expired'
    account                  TEXT,
    config                   TEXT,                      -- JSON
    selection                TEXT,                      -- JSON
    document_limit           INTEGER,
    credentials              TEXT,                      -- JSON OAuth tokens
    oauth_state              TEXT UNIQUE,
    code_verifier            TEXT,
    redirect_url             TEXT,
    authorization_url        TEXT,
    authorization_expires_at TEXT,
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL
  );
  CREATE INDEX connectors_namespace ON connectors(namespace_id);
  CREATE INDEX connectors_organization ON connectors(organization_id);

  CREATE TABLE sync_runs (
    id           TEXT PRIMARY KEY,                      -- run_...
    connector_id TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
    status       TEXT NOT NULL,                         -- 'queued' | 'running' | 'done' | 'failed'
    error        TEXT,
    counts       TEXT,                                  -- JSON
    failed_items TEXT,                                  -- JSON array of {item, reason}
    started_at   TEXT,
    finished_at  TEXT,
    created_at   TEXT NOT NULL
  );
  CREATE INDEX sync_runs_connector ON sync_runs(connector_id, created_at);
  -- At most one active run per connector: a second trigger is a 409.
  CREATE UNIQUE INDEX sync_runs_active ON sync_runs(connector_id) WHERE status IN ('queued', 'running');

  CREATE TABLE connector_items (
    connector_id TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
    external_id  TEXT NOT NULL,
    document_id  TEXT REFERENCES documents(id) ON DELETE SET NULL,
    version      TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (connector_id, external_id)
  );
  CREATE INDEX connector_items_document ON connector_items(document_id);
  `,
  // 2: a search index per namespace (replaces the FTS5 tables, whose BM25 statistics were shared
  // by every namespace of every organization: one tenant's words moved another's scores).
  `
  DROP TRIGGER chunks_fts_insert;
  DROP TRIGGER chunks_fts_delete;
  DROP TRIGGER chunks_fts_update;
  DROP TABLE chunks_fts;
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  DROP TABLE memories_fts;

  -- One space per namespace and corpus: the units (chunks or memories) indexed in it and their
  -- total length in tokens, BM25's N and average length.
  CREATE TABLE search_spaces (
    id           INTEGER PRIMARY KEY,
    namespace_id TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    corpus       TEXT NOT NULL CHECK (corpus IN ('chunks', 'memories')),
    units        INTEGER NOT NULL DEFAULT 0,
    length       INTEGER NOT NULL DEFAULT 0,
    UNIQUE (namespace_id, corpus)
  );
  -- A unit's length in tokens (its text and its context).
  CREATE TABLE search_units (
    space  INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    unit   INTEGER NOT NULL,                            -- the chunk's or memory's rowid
    length INTEGER NOT NULL,
    PRIMARY KEY (space, unit)
  ) WITHOUT ROWID;
  -- The postings, clustered by space and stem: a query reads its own namespace's lists only.
  CREATE TABLE search_postings (
    space      INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    term       TEXT NOT NULL,
    unit       INTEGER NOT NULL,
    tf         INTEGER NOT NULL,                        -- occurrences in the unit's own text
    tf_context INTEGER NOT NULL,                        -- occurrences in the text around it
    length     INTEGER NOT NULL,                        -- the unit's, so BM25 scores a list in one pass
    PRIMARY KEY (space, term, unit)
  ) WITHOUT ROWID;
  -- Document frequencies per space: units holding the stem anywhere, and in their own text.
  CREATE TABLE search_terms (
    space      INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    term       TEXT NOT NULL,
    units      INTEGER NOT NULL,
    text_units INTEGER NOT NULL,
    PRIMARY KEY (space, term)
  ) WITHOUT ROWID;
  ${searchIndexTriggers("chunks", "text", "namespace_id, content, label, context")}
  ${searchIndexTriggers("memories", "memory", "namespace_id, memory, context")}
  INSERT INTO search_spaces (namespace_id, corpus)
    SELECT id, 'chunks' FROM namespaces UNION ALL SELECT id, 'memories' FROM namespaces;
  ${searchIndexBackfill("chunks", "text")}
  ${searchIndexBackfill("memories", "memory")}
  `,
  // 3: namespace counters. GET /namespaces reads each namespace's document and memory counts from
  // its row instead of counting rows per call. Triggers keep them in the writing transaction,
  // FK cascades included (SQLite fires triggers for cascaded deletes). memory_count holds the
  // latest, unforgotten memories; those whose forget_after has passed are subtracted when read
  // (a moment, not a write, ends them), found through the partial index below.
  `
  ALTER TABLE namespaces ADD COLUMN document_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE namespaces ADD COLUMN memory_count INTEGER NOT NULL DEFAULT 0;

  CREATE TRIGGER documents_count_insert AFTER INSERT ON documents BEGIN
    UPDATE namespaces SET document_count = document_count + 1 WHERE id = new.namespace_id;
  END;
  CREATE TRIGGER documents_count_delete AFTER DELETE ON documents BEGIN
    UPDATE namespaces SET document_count = document_count - 1 WHERE id = old.namespace_id;
  END;
  CREATE TRIGGER documents_count_move AFTER UPDATE OF namespace_id ON documents
    WHEN new.namespace_id IS NOT old.namespace_id BEGIN
    UPDATE namespaces SET document_count = document_count - 1 WHERE id = old.namespace_id;
    UPDATE namespaces SET document_count = document_count + 1 WHERE id = new.namespace_id;
  END;

  CREATE TRIGGER memories_count_insert AFTER INSERT ON memories
    WHEN new.is_latest = 1 AND new.is_forgotten = 0 BEGIN
    UPDATE namespaces SET memory_count = memory_count + 1 WHERE id = new.namespace_id;
  END;
  CREATE TRIGGER memories_count_delete AFTER DELETE ON memories
    WHEN old.is_latest = 1 AND old.is_forgotten = 0 BEGIN
    UPDATE namespaces SET memory_count = memory_count - 1 WHERE id = old.namespace_id;
  END;
  CREATE TRIGGER memories_count_update AFTER UPDATE OF namespace_id, is_latest, is_forgotten ON memories BEGIN
    UPDATE namespaces SET memory_count = memory_count - (old.is_latest = 1 AND old.is_forgotten = 0)
      WHERE id = old.namespace_id;
    UPDATE namespaces SET memory_count = memory_count + (new.is_latest = 1 AND new.is_forgotten = 0)
      WHERE id = new.namespace_id;
  END;

  CREATE INDEX memories_live_forget_after ON memories(namespace_id, forget_after)
    WHERE forget_after IS NOT NULL AND is_latest = 1 AND is_forgotten = 0;

  UPDATE namespaces SET
    document_count = (SELECT count(*) FROM documents d WHERE d.namespace_id = namespaces.id),
    memory_count = (SELECT count(*) FROM memories m
                    WHERE m.namespace_id = namespaces.id AND m.is_latest = 1 AND m.is_forgotten = 0);
  `,
  // 4: a question's relative dates ("last spring") are read against the namespace's latest
  // document date: found by an index seek instead of a scan of the namespace's documents.
  `
  CREATE INDEX documents_namespace_date ON documents(namespace_id, document_date) WHERE document_date IS NOT NULL;
  `,
  // 5: shared contexts posted once, units indexed at commit. A memory's context is the turns
  // around its source, and the memories of one document often share it whole: migration 2 posted
  // it again for each (a hundred postings per memory, about 16 of them its own text), and ingest
  // spent most of its time there. A context that several units of one write share is now posted
  // once (search_contexts, search_context_postings) and its units point to it; a context of one
  // unit stays in the unit's own postings, so that reading it costs what it did. Scores are
  // unchanged. Writes queue their units in search_pending and the index takes a transaction's
  // units in one pass when it commits (store/search-index.ts indexPending): one upsert per stem,
  // not one per unit and stem. Units indexed before keep their postings as they are.
  `
  DROP TRIGGER chunks_search_insert;
  DROP TRIGGER chunks_search_delete;
  DROP TRIGGER chunks_search_update;
  DROP TRIGGER memories_search_insert;
  DROP TRIGGER memories_search_delete;
  DROP TRIGGER memories_search_update;

  -- A context shared by several units of a space (by its sha1), how many units point to it, and
  -- its length in tokens.
  CREATE TABLE search_contexts (
    id      INTEGER PRIMARY KEY,
    space   INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    hash    TEXT NOT NULL,
    members INTEGER NOT NULL,
    length  INTEGER NOT NULL,
    UNIQUE (space, hash)
  );
  -- A shared context's stems. A unit pointing to it holds each of them in its context; the stems
  -- also in the unit's own text are in its own posting (search_postings.tf_context), not read here.
  CREATE TABLE search_context_postings (
    space   INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    term    TEXT NOT NULL,
    context INTEGER NOT NULL,                           -- search_contexts.id
    tf      INTEGER NOT NULL,
    PRIMARY KEY (space, term, context)
  ) WITHOUT ROWID;
  -- The unit's shared context; NULL: its context is in its own postings.
  ALTER TABLE search_units ADD COLUMN context INTEGER;
  CREATE INDEX search_units_context ON search_units(context, length) WHERE context IS NOT NULL;
  -- Units written and not yet indexed (until their transaction commits, or the next one does).
  CREATE TABLE search_pending (
    space INTEGER NOT NULL REFERENCES search_spaces(id) ON DELETE CASCADE,
    unit  INTEGER NOT NULL,
    PRIMARY KEY (space, unit)
  ) WITHOUT ROWID;
  ${pendingIndexTriggers("chunks", "text", "namespace_id, content, label, context")}
  ${pendingIndexTriggers("memories", "memory", "namespace_id, memory, context")}
  `,
  // 6: an organization's document tokens (for the optional document token quota, 402) are the sum
  // of its namespaces' counters, kept by triggers like document_count: a quota check reads one row
  // per namespace, never the documents. A token is counted as 4 characters of content, rounded up.
  // Connectors sync again after their own interval (seconds; 0: only when created or triggered).
  `
  ALTER TABLE namespaces ADD COLUMN document_tokens INTEGER NOT NULL DEFAULT 0;
  CREATE TRIGGER documents_tokens_insert AFTER INSERT ON documents BEGIN
    UPDATE namespaces SET document_tokens = document_tokens + (length(new.content) + 3) / 4 WHERE id = new.namespace_id;
  END;
  CREATE TRIGGER documents_tokens_delete AFTER DELETE ON documents BEGIN
    UPDATE namespaces SET document_tokens = document_tokens - (length(old.content) + 3) / 4 WHERE id = old.namespace_id;
  END;
  CREATE TRIGGER documents_tokens_update AFTER UPDATE OF content, namespace_id ON documents BEGIN
    UPDATE namespaces SET document_tokens = document_tokens - (length(old.content) + 3) / 4 WHERE id = old.namespace_id;
    UPDATE namespaces SET document_tokens = document_tokens + (length(new.content) + 3) / 4 WHERE id = new.namespace_id;
  END;
  UPDATE namespaces SET document_tokens =
    (SELECT coalesce(sum((length(d.content) + 3) / 4), 0) FROM documents d WHERE d.namespace_id = namespaces.id);

  ALTER TABLE connectors ADD COLUMN sync_interval_seconds INTEGER NOT NULL DEFAULT 86400;
  `,
  // 7: an appended conversation is extracted one new part at a time: how much of the document's
  // text its stored memories were drawn from (NULL: none yet, or the text or its inputs changed).
  `
  ALTER TABLE documents ADD COLUMN dreamed_chars INTEGER;
  `,
  // 8: an uploaded file's bytes beside its document, read by processing (and again by a re-run);
  // kept out of `documents` so that reads and lists of documents never load them.
  `
  CREATE TABLE document_files (
    document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    name        TEXT,
    mime_type   TEXT NOT NULL,
    kind        TEXT NOT NULL,  -- how its text is made: pdf | docx | html | markdown | text | image | audio | video
    size        INTEGER NOT NULL,
    bytes       BLOB NOT NULL
  );
  `,
  // 9: a profile's static and dynamic sections are its newest live memories of each kind: read
  // from an index of exactly those, not by walking the namespace's memories until enough of the
  // kind turn up (a namespace without static memories was walked whole on every profile).
  `
  CREATE INDEX memories_profile ON memories(namespace_id, is_static, created_at)
    WHERE is_latest = 1 AND is_forgotten = 0;
  `,
  // 10: a read-only key (`memctx keys create --read-only`) reads but may not write: every write
  // route and MCP write tool refuses it (403). Keys made before stay read-write.
  `
  ALTER TABLE api_keys ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
  `,
  // 11: forget means gone from recall. A forgotten memory's source sentence, as its document says
  // it: the document's chunks (and the contexts around them) no longer hold it, now and whenever
  // the document is processed again (memory/forget.ts). The document's own text stays as stored.
  // No foreign key to the memory: the sentence stays forgotten if that memory row goes.
  `
  CREATE TABLE forgotten_sentences (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    memory_id   TEXT NOT NULL,
    sentence    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (document_id, memory_id, sentence)
  );
  CREATE INDEX forgotten_sentences_memory ON forgotten_sentences(memory_id);
  `,
  // 12: a memory is a fact (memory/extract/types.ts): whose it is (subject_kind: user, person,
  // thing or document), the value its attribute takes (fact_value) and whether that is so or no
  // longer so (polarity). Supersession (memory/relations.ts) and the profile read them. Memories
  // from before keep NULL kind and value and 'is': the profile reads their subject as it did.
  `
  ALTER TABLE memories ADD COLUMN subject_kind TEXT;
  ALTER TABLE memories ADD COLUMN fact_value TEXT;
  ALTER TABLE memories ADD COLUMN polarity TEXT NOT NULL DEFAULT 'is';
  `,
  // 13: secrets are screened from what is added (text/secrets.ts) unless the deployment or the
  // namespace says otherwise: the namespace's own setting (NULL: the deployment's, 1 on, 0 off).
  // What is still being processed is counted and read on each tool call of an agent (a namespace
  // record's processing counts, search over text not indexed yet): from indexes of exactly those rows,
  // not by reading every document of the namespace.
  `
  ALTER TABLE namespaces ADD COLUMN secret_screening INTEGER;
  CREATE INDEX documents_unindexed ON documents(namespace_id) WHERE status NOT IN ('done', 'failed');
  CREATE INDEX documents_dreaming ON documents(namespace_id) WHERE dreaming_status = 'dreaming';
  `,
  // 14: a namespace's memory version, raised by every write of its memories. Relation detection
  // drafts a document's memories outside any transaction (store/memory-draft.ts) against the
  // version it read; the store commits the draft only if the version is still that one, else the
  // caller drafts again. No foreign key: a namespace's delete takes its row (namespaces.ts).
  `
  CREATE TABLE memory_versions (
    namespace_id TEXT PRIMARY KEY,
    version      INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TRIGGER memories_version_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_versions (namespace_id, version) VALUES (new.namespace_id, 1)
      ON CONFLICT (namespace_id) DO UPDATE SET version = version + 1;
  END;
  CREATE TRIGGER memories_version_update AFTER UPDATE ON memories BEGIN
    INSERT INTO memory_versions (namespace_id, version) VALUES (new.namespace_id, 1)
      ON CONFLICT (namespace_id) DO UPDATE SET version = version + 1;
    INSERT INTO memory_versions (namespace_id, version) SELECT old.namespace_id, 1
      WHERE old.namespace_id IS NOT new.namespace_id
      ON CONFLICT (namespace_id) DO UPDATE SET version = version + 1;
  END;
  CREATE TRIGGER memories_version_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memory_versions (namespace_id, version) VALUES (old.namespace_id, 1)
      ON CONFLICT (namespace_id) DO UPDATE SET version = version + 1;
  END;
  `,
];

/**
 * Migration 2's triggers: the search index follows its table on every insert, update and delete
 * (cascades included). Tokenizing is JavaScript's: memctx_terms(text, context), registered on
 * every connection by openDatabase (store/search-index.ts), gives a unit's length and stems.
 * Frozen with migration 2: later changes are new steps.
 */
function searchIndexTriggers(table: "chunks" | "memories", text: string, columns: string): string {
  const space = (row: "new" | "old") =>
    `(SELECT id FROM search_spaces WHERE namespace_id = ${row}.namespace_id AND corpus = '${table}')`;
  // The unit's stems, {stem: [count in text, count in context]}: tokenized again on delete, as
  // FTS5's external-content tables do, rather than stored (it would double the index's size).
  const stems = (row: "new" | "old") =>
    `json_each(memctx_terms(${row}.${text}, ${row}.context) ->> '$.terms')`;
  const add = `
    INSERT INTO search_spaces (namespace_id, corpus) VALUES (new.namespace_id, '${table}')
      ON CONFLICT (namespace_id, corpus) DO NOTHING;
    INSERT INTO search_units (space, unit, length)
      SELECT ${space("new")}, new.rowid, memctx_terms(new.${text}, new.context) ->> '$.length';
    INSERT INTO search_postings (space, term, unit, tf, tf_context, length)
      SELECT u.space, e.key, u.unit, e.value ->> 0, e.value ->> 1, u.length
      FROM search_units u, ${stems("new")} e WHERE u.space = ${space("new")} AND u.unit = new.rowid;
    INSERT INTO search_terms (space, term, units, text_units)
      SELECT ${space("new")}, e.key, 1, (e.value ->> 0) > 0 FROM ${stems("new")} e WHERE true
      ON CONFLICT (space, term) DO UPDATE SET units = units + 1, text_units = text_units + excluded.text_units;
    UPDATE search_spaces SET units = search_spaces.units + 1, length = search_spaces.length + u.length
      FROM search_units u WHERE u.space = search_spaces.id AND search_spaces.id = ${space("new")} AND u.unit = new.rowid;`;
  const remove = `
    UPDATE search_spaces SET units = search_spaces.units - 1, length = search_spaces.length - u.length
      FROM search_units u WHERE u.space = search_spaces.id AND search_spaces.id = ${space("old")} AND u.unit = old.rowid;
    UPDATE search_terms SET units = units - 1 WHERE space = ${space("old")} AND term IN (SELECT e.key FROM ${stems("old")} e);
    UPDATE search_terms SET text_units = text_units - 1 WHERE space = ${space("old")} AND term IN
      (SELECT e.key FROM ${stems("old")} e WHERE (e.value ->> 0) > 0);
    DELETE FROM search_postings WHERE space = ${space("old")} AND unit = old.rowid AND term IN
      (SELECT e.key FROM ${stems("old")} e);
    DELETE FROM search_units WHERE space = ${space("old")} AND unit = old.rowid;`;
  return `
  CREATE TRIGGER ${table}_search_insert AFTER INSERT ON ${table} BEGIN ${add}
  END;
  CREATE TRIGGER ${table}_search_delete AFTER DELETE ON ${table} BEGIN ${remove}
  END;
  CREATE TRIGGER ${table}_search_update AFTER UPDATE OF ${columns} ON ${table} BEGIN ${remove} ${add}
  END;`;
}

/** Migration 2 indexes the rows already there, in one pass per table. */
function searchIndexBackfill(table: "chunks" | "memories", text: string): string {
  return `
  INSERT INTO search_postings (space, term, unit, tf, tf_context, length)
    SELECT s.id, e.key, r.rowid, e.value ->> 0, e.value ->> 1, memctx_terms(r.${text}, r.context) ->> '$.length'
    FROM ${table} r JOIN search_spaces s ON s.namespace_id = r.namespace_id AND s.corpus = '${table}',
      json_each(memctx_terms(r.${text}, r.context) ->> '$.terms') e;
  INSERT INTO search_units (space, unit, length)
    SELECT s.id, r.rowid, memctx_terms(r.${text}, r.context) ->> '$.length'
    FROM ${table} r JOIN search_spaces s ON s.namespace_id = r.namespace_id AND s.corpus = '${table}';
  INSERT INTO search_terms (space, term, units, text_units)
    SELECT p.space, p.term, count(*), sum(p.tf > 0)
    FROM search_postings p JOIN search_spaces s ON s.id = p.space AND s.corpus = '${table}'
    GROUP BY p.space, p.term;
  UPDATE search_spaces SET units = x.n, length = x.l
    FROM (SELECT space, count(*) AS n, sum(length) AS l FROM search_units GROUP BY space) x
    WHERE x.space = search_spaces.id AND search_spaces.corpus = '${table}';`;
}

/**
 * Migration 5's triggers. A written unit is queued in search_pending (indexed at commit, see
 * store/search-index.ts); a deleted or changed one leaves the index at once. Tokenizing is
 * JavaScript's: memctx_terms(text, context) gives the old row's stems again rather than the index
 * storing them. Frozen with migration 5: later changes are new steps.
 */
function pendingIndexTriggers(table: "chunks" | "memories", text: string, columns: string): string {
  const space = (row: "new" | "old") =>
    `(SELECT id FROM search_spaces WHERE namespace_id = ${row}.namespace_id AND corpus = '${table}')`;
  const indexed = `EXISTS (SELECT 1 FROM search_units WHERE space = ${space("old")} AND unit = old.rowid)`;
  const shared = `(SELECT context FROM search_units WHERE space = ${space("old")} AND unit = old.rowid)`;
  const stems = `json_each(memctx_terms(old.${text}, old.context) ->> '$.terms')`;
  const add = `
    INSERT INTO search_spaces (namespace_id, corpus) VALUES (new.namespace_id, '${table}')
      ON CONFLICT (namespace_id, corpus) DO NOTHING;
    INSERT INTO search_pending (space, unit) VALUES (${space("new")}, new.rowid) ON CONFLICT DO NOTHING;`;
  // Only an indexed unit (in search_units) changes the statistics; a pending one is just dequeued.
  const remove = `
    UPDATE search_spaces SET units = search_spaces.units - 1, length = search_spaces.length - u.length
      FROM search_units u WHERE u.space = search_spaces.id AND search_spaces.id = ${space("old")} AND u.unit = old.rowid;
    UPDATE search_terms SET units = units - 1 WHERE space = ${space("old")} AND ${indexed}
      AND term IN (SELECT e.key FROM ${stems} e);
    UPDATE search_terms SET text_units = text_units - 1 WHERE space = ${space("old")} AND ${indexed}
      AND term IN (SELECT e.key FROM ${stems} e WHERE (e.value ->> 0) > 0);
    DELETE FROM search_postings WHERE space = ${space("old")} AND unit = old.rowid AND term IN
      (SELECT e.key FROM ${stems} e);
    UPDATE search_contexts SET members = members - 1 WHERE id = ${shared};
    DELETE FROM search_context_postings WHERE space = ${space("old")} AND context = ${shared}
      AND (SELECT members FROM search_contexts WHERE id = ${shared}) = 0
      AND term IN (SELECT e.key FROM ${stems} e WHERE (e.value ->> 1) > 0);
    DELETE FROM search_contexts WHERE id = ${shared} AND members = 0;
    DELETE FROM search_units WHERE space = ${space("old")} AND unit = old.rowid;
    DELETE FROM search_pending WHERE space = ${space("old")} AND unit = old.rowid;`;
  return `
  CREATE TRIGGER ${table}_search_insert AFTER INSERT ON ${table} BEGIN ${add}
  END;
  CREATE TRIGGER ${table}_search_delete AFTER DELETE ON ${table} BEGIN ${remove}
  END;
  CREATE TRIGGER ${table}_search_update AFTER UPDATE OF ${columns} ON ${table} BEGIN ${remove} ${add}
  END;`;
}

export const SCHEMA_VERSION = migrations.length;

/**
 * Brings the file up to SCHEMA_VERSION. Safe when several processes open the same file at once:
 * each step re-reads the version inside its write transaction.
 */
export function migrate(db: DatabaseSync): void {
  const version = () => (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version() > SCHEMA_VERSION) {
    throw new Error(
      `this data directory was written by a newer memctx (schema ${version()} > ${SCHEMA_VERSION}); upgrade memctx`,
    );
  }
  while (version() < SCHEMA_VERSION) {
    db.exec("BEGIN IMMEDIATE");
    try {
      const v = version();
      if (v < SCHEMA_VERSION) {
        db.exec(migrations[v]!);
        db.exec(`PRAGMA user_version = ${v + 1}`);
      }
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  }
}
