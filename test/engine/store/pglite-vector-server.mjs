// PGlite (PostgreSQL compiled to WASM) with the pgvector extension, served on the PostgreSQL wire
// protocol on 127.0.0.1 (a free port, printed as `listening PORT`), so that the real `pg` driver
// and memctx's PostgreSQL store connect to it as to a server. A process of its own: memctx's
// connection blocks its thread while it waits for an answer, so the server cannot share it.
// Used by pgvector.test.ts; Debian's PostgreSQL here has no pgvector package.
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const db = await PGlite.create({ extensions: { vector } });
const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1" });
server.addEventListener("listening", (e) => process.stdout.write(`listening ${e.detail.port}\n`));
await server.start();
const stop = async () => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
