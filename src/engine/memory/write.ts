import type { Metadata } from "../../api/common.js";
import type { Memory } from "../../api/memories.js";
import { ConflictError, NotFoundError } from "../errors.js";
import type { Embedder } from "../models/embedder.js";
import { screensSecrets } from "../services/screening.js";
import type { Db } from "../store/db.js";
import { toMemory } from "../store/memories.js";
import { editMemory, writeMemories as storeMemories } from "../store/memory-writes.js";
import { findNamespace, getNamespace, type NamespaceRow } from "../store/namespaces.js";
import { mergeRedactions, type Redaction, screenSecrets } from "../text/secrets.js";
import { reembedChunks } from "./forget.js";
import type { MemorySelector } from "./read.js";
import { normalizeExpiry } from "./relations.js";

/**
 * Memories written by the caller instead of extracted from a document (legacy v4: POST and PATCH
 * /v4/memories). They have no source document; search, lists, the profile and forgetting treat
 * them as any other memory. An update is a new version whose parent is the old memory, which is no
 * longer latest (the same `updates` relation extraction records).
 */

export interface NewMemory {
  content: string;
  isStatic?: boolean | undefined;
  metadata?: Metadata | undefined;
  forgetAfter?: string | undefined;
  forgetReason?: string | undefined;
  eventDate?: string | undefined;
}

export interface MemoryWriteDeps {
  db: Db;
  embedder?: Embedder | null | undefined;
  log?: ((message: string) => void) | undefined;
  /** The deployment's secret screening (services/screening.ts); a namespace's own setting wins. Default on. */
  secretScreening?: boolean | undefined;
}

/**
 * The texts less their secrets, as the namespace screens what it is told (a namespace not made
 * yet: as the deployment does), and what was replaced.
 */
async function screened(
  deps: MemoryWriteDeps,
  ns: NamespaceRow | undefined,
  texts: readonly string[],
): Promise<{ texts: string[]; redacted: Redaction[] }> {
  const deployment = deps.secretScreening ?? true;
  if (!(ns ? screensSecrets(deployment, ns) : deployment)) return { texts: [...texts], redacted: [] };
  const each = texts.map((t) => screenSecrets(t));
  return { texts: each.map((e) => e.text), redacted: mergeRedactions(...each.map((e) => e.redacted)) };
}

/** Vectors for the texts when an embedder is configured; without one (or when it fails) none. */
async function vectorsFor(
  deps: MemoryWriteDeps,
  texts: string[],
  signal?: AbortSignal,
): Promise<({ model: string; embedding: Float32Array } | undefined)[]> {
  const embedder = deps.embedder;
  if (!embedder) return texts.map(() => undefined);
  try {
    const vectors = await embedder.embed(texts, signal);
    return texts.map((_, i) => {
      const embedding = vectors[i];
      return embedding ? { model: embedder.model, embedding } : undefined;
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    deps.log?.(`embedding written memories failed, storing them without vectors: ${String(err)}`);
    return texts.map(() => undefined);
  }
}

/**
 * Writes memories to a namespace (by name) in one transaction (embedded first, outside it). The
 * namespace is made inside the transaction, so a refused write creates not even the namespace.
 */
export async function writeMemories(
  deps: MemoryWriteDeps,
  organizationId: string,
  namespace: string,
  memories: readonly NewMemory[],
  signal?: AbortSignal,
): Promise<{ memories: Memory[]; redacted: Redaction[] }> {
  const { texts, redacted } = await screened(
    deps,
    await findNamespace(deps.db, organizationId, namespace),
    memories.map((m) => m.content),
  );
  const vectors = await vectorsFor(deps, texts, signal);
  const rows = await storeMemories(
    deps.db,
    organizationId,
    namespace,
    memories.map((m, i) => ({
      memory: texts[i]!,
      metadata: m.metadata ?? {},
      isStatic: m.isStatic ?? false,
      isInference: false,
      subject: null,
      attribute: null,
      eventDate: m.eventDate ? m.eventDate.slice(0, 10) : null,
      forgetAfter: normalizeExpiry(m.forgetAfter),
      forgetReason: m.forgetReason ?? null,
      documentId: null,
      vector: vectors[i],
    })),
  );
  return { memories: rows.map(toMemory), redacted };
}

export interface MemoryUpdate {
  newContent: string;
  metadata?: Metadata | undefined;
  /** Undefined keeps the old expiry; null clears it. */
  forgetAfter?: string | null | undefined;
  forgetReason?: string | null | undefined;
}

/**
 * A new version of a live, latest memory: version + 1, parent the old memory, the same root. The
 * old one stays readable as a parent; its source sentence is no longer recalled from its document. A forgotten memory, or one already superseded, is a 409
 * (update its latest version instead).
 */
export async function updateMemory(
  deps: MemoryWriteDeps,
  namespaceId: string | null,
  selector: MemorySelector,
  update: MemoryUpdate,
  signal?: AbortSignal,
): Promise<Memory> {
  const {
    texts: [newContent],
  } = await screened(deps, namespaceId ? await getNamespace(deps.db, namespaceId) : undefined, [
    update.newContent,
  ]);
  const [vector] = await vectorsFor(deps, [newContent!], signal);
  const done = await editMemory(deps.db, namespaceId, selector, {
    memory: newContent!,
    metadata: update.metadata,
    forgetAfter: update.forgetAfter === undefined ? undefined : normalizeExpiry(update.forgetAfter),
    forgetReason: update.forgetReason,
    vector,
  });
  if ("missing" in done) throw new NotFoundError("Memory");
  if ("forgotten" in done) {
    const { id } = done.forgotten;
    throw new ConflictError("Memory is forgotten", `memory ${id} is forgotten and cannot be updated`);
  }
  if ("superseded" in done) {
    const { id } = done.superseded;
    throw new ConflictError(
      "Memory has a newer version",
      `memory ${id} was superseded; update its latest version instead`,
    );
  }
  const { row, rewritten } = done;
  const memory = toMemory(row);
  await reembedChunks(deps, rewritten);
  return memory;
}
