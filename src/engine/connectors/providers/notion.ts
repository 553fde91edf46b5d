import { apiBase, apiUrlConfig, optionalStringArray } from "../config.js";
import { defaultFetch, getJson, isClientError, requestJson } from "../http.js";
import { bearer, clientCredentials, envApiUrl, OAuthClient, oauthEndpoints } from "../oauth.js";
import type { ConnectorProvider, ProviderOptions, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * Notion: every page shared with the integration (POST /v1/search), or the pages in
 * `selection.pages` (ids), one `notion_doc` document per page, its blocks rendered as text
 * (GET /v1/blocks/{id}/children, nested blocks included). Version: the page's last_edited_time.
 */

export const NOTION_API_URL = "https://api.notion.com";
export const NOTION_VERSION = "2022-06-28";
/** Nested blocks deeper than this are left out (Notion pages rarely nest past a few levels). */
const MAX_BLOCK_DEPTH = 8;

interface NotionPage {
  object: string;
  id: string;
  url?: string;
  last_edited_time: string;
  in_trash?: boolean;
  archived?: boolean;
  properties?: Record<string, { type: string; title?: RichText[] }>;
}
interface RichText {
  plain_text?: string;
}
interface NotionBlock {
  id: string;
  type: string;
  has_children?: boolean;
  [key: string]: unknown;
}
interface Listing<T> {
  results: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export function createNotion(opts: ProviderOptions = {}): ConnectorProvider {
  const env = opts.env ?? process.env;
  const fetch = opts.fetch ?? defaultFetch();
  const envApi = envApiUrl("notion", env, NOTION_API_URL);
  const oauth = new OAuthClient({
    provider: "notion",
    ...oauthEndpoints("notion", env, {
      authorizeUrl: `${envApi}/v1/oauth/authorize`,
      tokenUrl: `${envApi}/v1/oauth/token`,
    }),
    scopes: [],
    extraAuthParams: { owner: "user" },
    clientAuth: "basic",
    tokenFormat: "json",
    credentials: () => clientCredentials("notion", env),
    fetch,
  });
  return {
    provider: "notion",
    kind: "oauth",
    validateConfig: apiUrlConfig(envApi),
    authorizationUrl: (p) => oauth.authorizationUrl(p),
    async exchangeCode(p) {
      // Notion's token answer names the workspace; there is nothing else to ask.
      const tokens = await oauth.exchangeCodeRaw(p);
      const workspace = tokens.raw.workspace_name;
      return { ...tokens.tokens, account: typeof workspace === "string" ? workspace : null };
    },
    refresh: (tokens) => oauth.refresh(tokens),
    sync: (ctx) => syncNotion(ctx, envApi),
  };
}

async function* syncNotion(ctx: SyncContext, envApi: string): AsyncGenerator<SyncItem> {
  const api = apiBase(ctx.config, envApi);
  const headers = {
    authorization: bearer(ctx.credentials, "notion"),
    "notion-version": NOTION_VERSION,
    "content-type": "application/json",
  };
  const selected = optionalStringArray(ctx.selection, "pages");
  const pages: NotionPage[] = [];
  if (selected !== undefined) {
    for (const id of selected) {
      try {
        pages.push(
          await getJson<NotionPage>(
            ctx.fetch,
            `${api}/v1/pages/${encodeURIComponent(id)}`,
            headers,
            `GET /v1/pages/${id}`,
            ctx.signal,
          ),
        );
      } catch (error) {
        if (!isClientError(error)) throw error;
        yield { kind: "failed", item: id, reason: error.message };
      }
    }
  } else {
    let cursor: string | null = null;
    do {
      const body: Record<string, unknown> = { filter: { property: "object", value: "page" }, page_size: 100 };
      if (cursor) body.start_cursor = cursor;
      const { json } = await requestJson<Listing<NotionPage>>(
        ctx.fetch,
        `${api}/v1/search`,
        { method: "POST", headers, body: JSON.stringify(body), signal: ctx.signal },
        "POST /v1/search",
      );
      pages.push(...json.results.filter((p) => p.object === "page"));
      cursor = json.has_more ? json.next_cursor : null;
    } while (cursor !== null && pages.length < ctx.documentLimit);
  }

  let documents = 0;
  for (const page of pages) {
    if (documents >= ctx.documentLimit) return;
    if (page.in_trash || page.archived) continue;
    const title = pageTitle(page);
    const meta = {
      title,
      url: page.url ?? null,
      type: "notion_doc" as const,
      metadata: { notionPageId: page.id },
    };
    documents++;
    if (ctx.previous.get(page.id) === page.last_edited_time) {
      yield unchangedDocument(page.id, page.last_edited_time, meta);
      continue;
    }
    try {
      const lines = await renderBlocks(ctx, api, headers, page.id, 0);
      yield {
        kind: "document",
        externalId: page.id,
        content: lines.join("\n"),
        ...meta,
        version: page.last_edited_time,
      };
    } catch (error) {
      if (!isClientError(error)) throw error;
      documents--;
      yield { kind: "failed", item: page.id, reason: error.message };
    }
  }
}

function pageTitle(page: NotionPage): string | null {
  for (const property of Object.values(page.properties ?? {})) {
    if (property.type === "title") return plain(property.title) || null;
  }
  return null;
}

function plain(rich: RichText[] | undefined): string {
  return (rich ?? []).map((r) => r.plain_text ?? "").join("");
}

async function renderBlocks(
  ctx: SyncContext,
  api: string,
  headers: Record<string, string>,
  blockId: string,
  depth: number,
): Promise<string[]> {
  const lines: string[] = [];
  let cursor: string | null = null;
  do {
    const query = `page_size=100${cursor ? `&start_cursor=${encodeURIComponent(cursor)}` : ""}`;
    const listing: Listing<NotionBlock> = await getJson<Listing<NotionBlock>>(
      ctx.fetch,
      `${api}/v1/blocks/${encodeURIComponent(blockId)}/children?${query}`,
      headers,
      `GET /v1/blocks/${blockId}/children`,
      ctx.signal,
    );
    for (const block of listing.results) {
      const line = renderBlock(block);
      if (line !== null) lines.push(`${"  ".repeat(depth)}${line}`);
      // Child pages and databases are documents of their own, not part of this page.
      const nested = block.has_children && block.type !== "child_page" && block.type !== "child_database";
      if (nested && depth < MAX_BLOCK_DEPTH)
        lines.push(...(await renderBlocks(ctx, api, headers, block.id, depth + 1)));
    }
    cursor = listing.has_more ? listing.next_cursor : null;
  } while (cursor !== null);
  return lines;
}

/** One block as a line of Markdown-like text; null for blocks without text. */
export function renderBlock(block: NotionBlock): string | null {
  const data = (block[block.type] ?? {}) as {
    rich_text?: RichText[];
    checked?: boolean;
    title?: string;
    language?: string;
    cells?: RichText[][];
    expression?: string;
    caption?: RichText[];
  };
  const text = plain(data.rich_text);
  switch (block.type) {
    case "heading_1":
      return `# ${text}`;
    case "heading_2":
      return `## ${text}`;
    case "heading_3":
      return `### ${text}`;
    case "bulleted_list_item":
      return `- ${text}`;
    case "numbered_list_item":
      return `1. ${text}`;
    case "to_do":
      return `[${data.checked ? "x" : " "}] ${text}`;
    case "quote":
      return `> ${text}`;
    case "code":
      return `\`\`\`${data.language ?? ""}\n${text}\n\`\`\``;
    case "equation":
      return data.expression ?? null;
    case "child_page":
    case "child_database":
      return data.title ? `[${data.title}]` : null;
    case "table_row":
      return (data.cells ?? []).map((cell) => plain(cell)).join(" | ");
    case "image":
    case "video":
    case "file":
    case "pdf": {
      const caption = plain(data.caption);
      return caption ? `[${block.type}: ${caption}]` : null;
    }
    case "divider":
      return "---";
    default:
      return data.rich_text !== undefined ? text : null;
  }
}
