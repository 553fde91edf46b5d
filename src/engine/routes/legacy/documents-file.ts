import { endpoints } from "../../../api/endpoints.js";
import { LegacyFileFields } from "../../../api/files.js";
import type { EngineContext } from "../../context.js";
import { addDocuments } from "../../services/documents.js";
import { storedFile } from "../multipart.js";
import { type EngineApp, route } from "../route.js";
import { containerTagOf, writableNamespace } from "./container-tag.js";

/** The engine reads the upload's file part itself; its text fields are checked by this schema. */
const legacyAddFile = { ...endpoints.legacyAddFile, body: LegacyFileFields };

/**
 * `POST /v3/documents/file`: the v3 upload, translated onto the same add as
 * `POST /ns/{namespace}/document/file` (containerTag is the namespace, customId the id).
 */
export function documentFileRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, ctx, legacyAddFile, async ({ principal, body, upload }) => {
    const file = storedFile(upload!, body);
    const [added] = await addDocuments(ctx, principal.organization.id, [
      {
        namespace: writableNamespace(principal, containerTagOf(body)),
        document: {
          content: "",
          file,
          title: file.name,
          customId: body.customId,
          metadata: body.metadata,
          supportingContext: body.entityContext,
          taskType: body.taskType,
          dreaming: body.dreaming,
        },
      },
    ]);
    return { id: added!.id, status: added!.status };
  });
}
