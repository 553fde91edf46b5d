import { endpoints } from "../../../api/endpoints.js";
import type { ConversationMessage } from "../../../api/legacy.js";
import type { EngineContext } from "../../context.js";
import { InputError } from "../../errors.js";
import { addDocuments } from "../../services/documents.js";
import { formatTurn } from "../../text/conversation.js";
import { type EngineApp, route } from "../route.js";
import { containerTagOf, writableNamespace } from "./container-tag.js";

/** What a message said, as text: its text parts, or the tools it called. */
function messageText(m: ConversationMessage): string {
  const said =
    typeof m.content === "string"
      ? m.content
      : m.content
          .map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : ""))
          .filter((t) => t.trim() !== "")
          .join(" ");
  if (said.trim() !== "") return said;
  const calls = (m.tool_calls ?? []).map((c) => c.function?.name).filter((n): n is string => !!n);
  return calls.length ? `[called ${calls.join(", ")}]` : "";
}

/**
 * POST /v4/conversations: the messages become one transcript (one "role: text" turn per line,
 * the format the pipeline reads as a conversation), stored as the document whose caller id is the
 * conversationId. Re-sending the conversation (with its new messages) replaces that one document,
 * as a v5 upsert by id does; unchanged messages are not processed again.
 */
export function legacyConversationRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, ctx, endpoints.legacyAddConversation, async ({ principal, body }) => {
    const lines = body.messages
      .map((m) => ({ m, text: messageText(m) }))
      .filter(({ text }) => text.trim() !== "")
      .map(({ m, text }) => formatTurn(m.name?.trim() ? m.name : m.role, text));
    if (lines.length === 0) {
      throw new InputError("messages", "at least one message must carry text (a string or a text part)");
    }
    const [added] = await addDocuments(ctx, principal.organization.id, [
      {
        namespace: writableNamespace(principal, containerTagOf(body)),
        document: { content: lines.join("\n"), customId: body.conversationId, metadata: body.metadata },
      },
    ]);
    return {
      id: added!.id,
      conversationId: body.conversationId,
      status: added!.status,
      ...(added!.redacted ? { redacted: added!.redacted } : {}),
    };
  });
}
