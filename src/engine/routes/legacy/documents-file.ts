import { endpoints } from "../../../api/endpoints.js";
import { LegacyFileFields } from "../../../api/files.js";
import type { EngineContext } from "../../context.js";
import { withinDocumentQuota } from "../../quota.js";
import { addDocument } from "../../store/documents.js";
import { storedFile } from "../multipart.js";
import { type EngineApp, route } from "../route.js";
import { containerTagOf, writeNamespace } from "./container-tag.js";

/** The engine reads the upload's file part itself; its text fields are checked by this schema. */
const legacyAddFile = { ...endpoints.legacyAddFile, body: LegacyFileFields };

/**
 * `POST /v3/documents/file`: the v3 upload, translated onto the same add as
 * `POST /ns/{namespace}/document/file` (containerTag is the namespace, customId the id).
 */
export function documentFileRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, ctx, legacyAddFile, async ({ principal, body, upload }) => {
    const file = storedFile(upload!, body);
    const added = await withinDocumentQuota(
      ctx,
      principal.organization.id,
      async () =>
        await addDocument(ctx.db, await writeNamespace(ctx.db, principal, containerTagOf(body)), {
          content: "",
          file,
          title: file.name,
          customId: body.customId,
          metadata: body.metadata,
          supportingContext: body.entityContext,
          taskType: body.taskType,
          dreaming: body.dreaming,
        }),
    );
    ctx.queue.wake();
    return { id: added.id, status: added.status };
  });
}
