import { sealPlaintextSecrets } from "./connectors.js";
import { type Db, transaction } from "./db.js";
import { trimWholeKeyPrefixes } from "./organizations.js";

/**
 * Brings rows an older memctx wrote up to date, in one transaction when an engine opens:
 * connector secrets stored in plain text are sealed, API key prefixes that held a whole key are
 * trimmed. Nothing is written when there is nothing to change.
 */
export async function upgradeStoredRows(db: Db): Promise<void> {
  await transaction(db, async () => {
    await sealPlaintextSecrets(db);
    await trimWholeKeyPrefixes(db);
  });
}
