import { connectorService } from "./connectors/service.js";
import type { EngineContext } from "./context.js";
import { installDreaming } from "./memory/dreamer.js";
import { EXPIRY_SWEEP_MS, sweepExpired } from "./memory/forget.js";
import type { Dreamer } from "./pipeline/dreamer.js";
import { documentJobFailed, documentJobHandler } from "./services/document-job.js";

/**
 * Registers every kind of background job with the context's worker pool: documents through the
 * pipeline, dreaming (the given dreamer, or memory generation by default), connector syncs and
 * the expiry sweep of memories past their forget_after.
 * Runs where the jobs run: in the engine's own thread, or in each processing thread.
 */
export function installProcessing(
  ctx: EngineContext,
  dreamer?: Dreamer | ((ctx: EngineContext) => Dreamer),
): void {
  if (typeof dreamer === "function") ctx.dreamer = dreamer(ctx);
  else ctx.dreamer = dreamer ?? installDreaming(ctx);
  ctx.workers.register("document", documentJobHandler(ctx), documentJobFailed);
  connectorService(ctx);
  // A memory past its forget_after leaves chunk search too (memory/forget.ts).
  ctx.workers.every(EXPIRY_SWEEP_MS, () => sweepExpired(ctx));
}
