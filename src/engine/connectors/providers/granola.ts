import { apiBase, asObject, requiredString } from "../config.js";
import { getJson, isClientError } from "../http.js";
import { contentHash } from "../text.js";
import type { ConnectorProvider, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * Granola (public API, https://public-api.granola.ai, a `grn_` API key in `config.apiKey`):
 * GET /v1/notes (cursor pages) lists the meeting notes, GET /v1/notes/{id}?include=transcript
 * reads one; each note becomes a `granola` document: title, attendees, the AI summary and the
 * transcript (one "Speaker: text" line per utterance). Version: the note's updated_at when listed,
 * else a hash of the rendered note. The base is `config.apiUrl` (the API is in beta: paths may move).
 */

export const GRANOLA_API_URL = "https://public-api.granola.ai";

interface GranolaNoteSummary {
  id: string;
  title?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
}
interface TranscriptEntry {
  speaker?: string | { name?: string | null; source?: string | null } | null;
  text?: string | null;
}
interface GranolaNote extends GranolaNoteSummary {
  summary_text?: string | null;
  summary_markdown?: string | null;
  attendees?: { name?: string | null; email?: string | null }[] | null;
  transcript?: TranscriptEntry[] | null;
  web_url?: string | null;
}

export function validateGranolaConfig(config: unknown): Record<string, unknown> {
  const obj = asObject(config, "config");
  requiredString(obj, "apiKey");
  apiBase(obj, GRANOLA_API_URL);
  return obj;
}

export function createGranola(): ConnectorProvider {
  return { provider: "granola", kind: "config", validateConfig: validateGranolaConfig, sync: syncGranola };
}

async function* syncGranola(ctx: SyncContext): AsyncGenerator<SyncItem> {
  const config = validateGranolaConfig(ctx.config);
  const api = apiBase(config, GRANOLA_API_URL);
  const headers = { authorization: `Bearer ${requiredString(config, "apiKey")}` };
  let documents = 0;
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ page_size: "30" });
    if (cursor) params.set("cursor", cursor);
    const listing: { notes?: GranolaNoteSummary[]; hasMore?: boolean; cursor?: string | null } =
      await getJson(ctx.fetch, `${api}/v1/notes?${params}`, headers, "GET /v1/notes", ctx.signal);
    for (const summary of listing.notes ?? []) {
      if (documents >= ctx.documentLimit) return;
      documents++;
      const listedVersion = summary.updated_at ?? null;
      const meta = {
        title: summary.title ?? null,
        type: "granola" as const,
        metadata: { granolaNoteId: summary.id },
      };
      if (listedVersion && ctx.previous.get(summary.id) === listedVersion) {
        yield unchangedDocument(summary.id, listedVersion, meta);
        continue;
      }
      try {
        const note = await getJson<GranolaNote>(
          ctx.fetch,
          `${api}/v1/notes/${encodeURIComponent(summary.id)}?include=transcript`,
          headers,
          `GET /v1/notes/${summary.id}`,
          ctx.signal,
        );
        const content = renderNote(note);
        yield {
          kind: "document",
          externalId: summary.id,
          content,
          title: note.title ?? summary.title ?? null,
          url: note.web_url ?? null,
          type: "granola",
          metadata: {
            granolaNoteId: summary.id,
            ...(note.created_at ? { date: note.created_at } : {}),
            attendees: (note.attendees ?? []).map((a) => a.name ?? a.email ?? "").filter(Boolean),
          },
          version: listedVersion ?? note.updated_at ?? contentHash(content),
        };
      } catch (error) {
        if (!isClientError(error)) throw error;
        documents--;
        yield { kind: "failed", item: summary.id, reason: error.message };
      }
    }
    cursor = listing.hasMore ? (listing.cursor ?? null) : null;
  } while (cursor !== null);
}

export function renderNote(note: GranolaNote): string {
  const parts: string[] = [];
  if (note.title) parts.push(`# ${note.title}`);
  const attendees = (note.attendees ?? []).map((a) => a.name ?? a.email).filter(Boolean);
  if (attendees.length > 0) parts.push(`Attendees: ${attendees.join(", ")}`);
  const summary = note.summary_markdown ?? note.summary_text;
  if (summary) parts.push(summary.trim());
  const transcript = (note.transcript ?? [])
    .filter((t) => t.text)
    .map((t) => {
      const speaker =
        typeof t.speaker === "string" ? t.speaker : (t.speaker?.name ?? t.speaker?.source ?? null);
      return speaker ? `${speaker}: ${t.text}` : t.text!;
    });
  if (transcript.length > 0) parts.push(`Transcript:\n${transcript.join("\n")}`);
  return parts.join("\n\n");
}
