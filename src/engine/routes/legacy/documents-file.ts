import { endpoints } from "../../../api/endpoints.js";
import { LegacyFileFields } from "../../../api/files.js";
import type { EngineContext } from "../../context.js";
import { transaction } from "../../store/db.js";
import { addDocument } from "../../store/documents.js";
import { ensureNamespace } from "../../store/namespaces.js";
import { storedFile } from "../multipart.js";
import { assertNamespaceAllowed, type EngineApp, route } from "../route.js";
import { BATCH_DEFAULT_NAMESPACE } from "./batch.js";

/** The engine reads the upload's file part itself; its text fields are checked by this schema. */
const legacyAddFile = { ...endpoints.legacyAddFile, body: LegacyFileFields };

/**
 * `POST /v3/documents/file`: the v3 upload, translated onto the same add as
 * `POST /ns/{namespace}/document/file` (containerTag is the namespace, customId the id).
 */
export function documentFileRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, ctx, legacyAddFile, ({ principal, body, upload }) => {
    const namespace = body.containerTag ?? body.containerTags?.[0] ?? BATCH_DEFAULT_NAMESPACE;
    assertNamespaceAllowed(principal, namespace);
    const file = storedFile(upload!, body);
    const added = transaction(ctx.db, () =>
      addDocument(ctx.db, ensureNamespace(ctx.db, principal.organization.id, namespace), {
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
