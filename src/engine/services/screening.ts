import type { EngineContext } from "../context.js";
import { getNamespace } from "../store/namespaces.js";
import { mergeRedactions, type Redaction, screenSecrets } from "../text/secrets.js";

/**
 * Whether secrets are screened out of what is added (text/secrets.ts): the namespace's own setting
 * (PATCH /ns/{ns} `secretScreening`) when it has one, else the deployment's
 * (MEMCTX_SECRET_SCREENING, default on).
 */
export const screensSecrets = (deployment: boolean, ns: { secret_screening: number | null }): boolean =>
  ns.secret_screening === null ? deployment : ns.secret_screening === 1;

/** MEMCTX_SECRET_SCREENING: `on` (default) or `off`; anything else stops the start, naming the variable. */
export function secretScreeningFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.MEMCTX_SECRET_SCREENING?.trim().toLowerCase();
  if (raw === undefined || raw === "" || raw === "on" || raw === "1" || raw === "true") return true;
  if (raw === "off" || raw === "0" || raw === "false") return false;
  throw new Error(
    `MEMCTX_SECRET_SCREENING must be "on" or "off" (got ${JSON.stringify(env.MEMCTX_SECRET_SCREENING)})`,
  );
}

/**
 * A text and its title with their secrets replaced by markers, and what was replaced. Off, or for
 * content that is a URL to fetch (its text is screened once fetched, see process-document.ts),
 * they come back as they were.
 */
export function screenText<T extends { content: string; title?: string | null | undefined }>(
  doc: T,
  on: boolean,
  opts: { isUrl: boolean },
): { document: T; redacted: Redaction[] } {
  if (!on) return { document: doc, redacted: [] };
  const content = opts.isUrl ? { text: doc.content, redacted: [] } : screenSecrets(doc.content);
  const title = doc.title ? screenSecrets(doc.title) : undefined;
  const redacted = mergeRedactions(content.redacted, title?.redacted);
  if (redacted.length === 0) return { document: doc, redacted };
  return {
    document: { ...doc, content: content.text, ...(title ? { title: title.text } : {}) },
    redacted,
  };
}

/**
 * A fetched or converted document's text and title, screened as its namespace says. What was
 * redacted is not reported (the add was answered before the text existed): its markers say it.
 */
export async function screenConverted<T extends { text: string; title: string | null }>(
  ctx: Pick<EngineContext, "db" | "secretScreening">,
  namespaceId: string,
  resolved: T,
): Promise<T> {
  const ns = await getNamespace(ctx.db, namespaceId);
  if (!ns || !screensSecrets(ctx.secretScreening, ns)) return resolved;
  const { document } = screenText({ content: resolved.text, title: resolved.title }, true, { isUrl: false });
  return { ...resolved, text: document.content, title: document.title ?? null };
}
