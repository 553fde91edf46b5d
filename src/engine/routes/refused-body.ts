/**
 * How much of a refused body is still read, and dropped, before the answer: a client still sending
 * when the server answers and closes meets a reset (EPIPE) instead of the answer. What goes past
 * this is not read: the answer goes, and the connection closes.
 */
export const REFUSED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Reads the rest of a refused body and drops it, up to REFUSED_BODY_DRAIN_BYTES (in memory: one
 * chunk at a time), so that the answer reaches a client that is still sending it.
 */
export async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let left = REFUSED_BODY_DRAIN_BYTES;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
      if (left < 0) break;
    }
  } catch {
    return; // the client went away: nothing left to answer
  }
  await reader.cancel().catch(() => {});
}
