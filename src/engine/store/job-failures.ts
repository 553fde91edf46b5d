import { type Db, transaction } from "./db.js";
import {
  documentsAwaitingDreams,
  setDocumentStatus,
  setDreamedChars,
  setDreamingStatus,
} from "./documents.js";
import { failJob, type JobRow } from "./jobs.js";
import { emptyCounts, finishRun, getRun } from "./sync-runs.js";

/**
 * What a job that fails for good leaves where readers look, written with the failure itself: a
 * document shows `failed` with the message (its generation only: a newer one is another job's);
 * the documents of a namespace that wait for memories stop waiting, without them; a connector's
 * sync run ends `failed`.
 */
export type FailureMark =
  | { document: { id: string; generation: number } }
  | { dreamsOf: string }
  | { syncRun: string };

/**
 * Records a failed attempt, and when the job fails for good its mark, in one transaction: if
 * either write fails (a full disk), neither happened, and the job is claimed again later instead
 * of ending `failed` with its document still showing a stage forever. Answers what happened and
 * how many rows the mark changed.
 */
export async function failJobWithMark(
  db: Db,
  job: JobRow,
  owner: string,
  message: string,
  retryable: boolean,
  mark: FailureMark | undefined,
): Promise<{ outcome: "retry" | "failed"; marked: number }> {
  return await transaction(db, async () => {
    const outcome = await failJob(db, job, owner, message, retryable);
    const marked = outcome === "failed" && mark ? await markFailure(db, mark, message) : 0;
    return { outcome, marked };
  });
}

async function markFailure(db: Db, mark: FailureMark, message: string): Promise<number> {
  if ("document" in mark) {
    const { id, generation } = mark.document;
    return (await setDocumentStatus(db, id, generation, "failed", message)) ? 1 : 0;
  }
  if ("dreamsOf" in mark) {
    const ids = (await documentsAwaitingDreams(db, mark.dreamsOf, Number.MAX_SAFE_INTEGER)).map((d) => d.id);
    await setDreamingStatus(db, ids, "done");
    // Turns appended meanwhile gave no memories: the next version is read whole again.
    for (const id of ids) await setDreamedChars(db, id, null);
    return ids.length;
  }
  const run = await getRun(db, mark.syncRun);
  if (!run || (run.status !== "queued" && run.status !== "running")) return 0;
  await finishRun(db, run.id, { status: "failed", error: message, counts: emptyCounts(), failedItems: [] });
  return 1;
}
