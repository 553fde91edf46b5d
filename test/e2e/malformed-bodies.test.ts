/**
 * A request can fail; the process cannot. A real `memctx serve` is fed, over a raw socket, bodies
 * that end early, lie about their length, break their chunked framing or their multipart framing,
 * on every kind of route that reads a body (v5 JSON, legacy JSON, both uploads). Each answers a 4xx
 * or the connection is closed; never a 5xx, and the server still answers /health after each.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { WAIT_MS } from "../support/wait.js";

const dir = tempDir("memctx-malformed-");
let serve: ServeChild;
beforeAll(async () => {
  serve = await spawnServe(dir.path);
});
afterAll(async () => {
  await stopChild(serve);
  dir.remove();
});

/**
 * How long a case waits for an answer before it gives up on the socket (a body still awaited):
 * either outcome passes those cases, so a slow answer cannot fail them.
 */
const ANSWER_WAIT_MS = 1_500;

/**
 * Writes `head` + `body` to the server as they are, then either keeps the socket open or half-closes
 * it (`end`), or destroys it after a moment (`abort`: the client goes away mid-body). Resolves with
 * the status of the first answer, or null if the connection closed or stayed silent.
 */
function raw(
  bytes: Buffer,
  after: "wait" | "end" | "abort" = "wait",
  waitMs = ANSWER_WAIT_MS,
): Promise<number | null> {
  const { hostname, port } = new URL(serve.url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let answer = "";
    const done = (status: number | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => done(null), waitMs);
    socket.on("data", (d) => {
      answer += d.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m) done(Number(m[1]));
    });
    socket.on("error", () => done(null));
    socket.on("close", () => done(null));
    socket.write(bytes, () => {
      if (after === "end") socket.end();
      if (after === "abort") setTimeout(() => socket.destroy(), 100);
    });
  });
}

const head = (path: string, contentType: string, framing: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: ${contentType}\r\n${framing}\r\n`;

const request = (path: string, contentType: string, body: Buffer, length = body.length) =>
  Buffer.concat([Buffer.from(head(path, contentType, `Content-Length: ${length}\r\n`)), body]);

const chunked = (path: string, contentType: string, framed: string) =>
  Buffer.from(head(path, contentType, "Transfer-Encoding: chunked\r\n") + framed);

const MULTIPART = "multipart/form-data; boundary=B";
/** A file part that is never closed: no `--B--` after it (the audit's body). */
const unclosedPart = Buffer.from(
  '--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n',
);
const wholeForm = Buffer.from(
  '--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello there, a small file\r\n--B--\r\n',
);

const uploads = ["/v3/documents/file", "/ns/malformed/document/file"];
const jsonRoutes = ["/ns/malformed/document", "/ns/malformed/search", "/v3/documents", "/v4/search"];

interface Case {
  name: string;
  bytes: Buffer;
  after?: "wait" | "end" | "abort";
}

const cases: Case[] = [
  ...uploads.flatMap((path): Case[] => [
    { name: `${path}: a file part never closed`, bytes: request(path, MULTIPART, unclosedPart) },
    {
      name: `${path}: Content-Length shorter than the body`,
      bytes: request(path, MULTIPART, wholeForm, wholeForm.length - 20),
    },
    {
      name: `${path}: Content-Length longer than the body, then the client half-closes`,
      bytes: request(path, MULTIPART, wholeForm, wholeForm.length + 500),
      after: "end",
    },
    {
      name: `${path}: the client goes away mid-file`,
      bytes: request(path, MULTIPART, unclosedPart, 100_000),
      after: "abort",
    },
    {
      name: `${path}: a part with no headers`,
      bytes: request(path, MULTIPART, Buffer.from("--B\r\n\r\n\r\nhello\r\n--B--\r\n")),
    },
    {
      name: `${path}: no boundary in the Content-Type`,
      bytes: request(path, "multipart/form-data", wholeForm),
    },
    {
      name: `${path}: chunked, a chunk size that is not hex`,
      bytes: chunked(path, MULTIPART, "zz\r\nhello\r\n0\r\n\r\n"),
    },
    {
      name: `${path}: chunked, cut off inside a chunk`,
      bytes: chunked(path, MULTIPART, `400\r\n${unclosedPart.toString()}`),
      after: "end",
    },
  ]),
  ...jsonRoutes.flatMap((path): Case[] => [
    {
      name: `${path}: JSON cut off`,
      bytes: request(path, "application/json", Buffer.from('{"content": "abc')),
    },
    {
      name: `${path}: Content-Length longer than the JSON, then the client half-closes`,
      bytes: request(path, "application/json", Buffer.from('{"content": "abc"}'), 400),
      after: "end",
    },
    {
      name: `${path}: not UTF-8`,
      bytes: request(path, "application/json", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])),
    },
    {
      name: `${path}: chunked, a chunk size that is not hex`,
      bytes: chunked(path, "application/json", 'zz\r\n{"query":"x"}\r\n0\r\n\r\n'),
    },
    {
      name: `${path}: chunked, cut off inside a chunk`,
      bytes: chunked(path, "application/json", '40\r\n{"query":'),
      after: "end",
    },
    {
      name: `${path}: a multipart body where JSON is expected`,
      bytes: request(path, MULTIPART, unclosedPart),
    },
  ]),
];

describe("memctx serve fed truncated and malformed bodies", () => {
  it.each(cases)("$name: never a 5xx, and /health answers after it", async ({ bytes, after }) => {
    const status = await raw(bytes, after);
    if (status !== null) expect(status, `answered ${status}`).toBeLessThan(500);
    expect(serve.child.exitCode, serve.stdout()).toBeNull();
    const health = await fetch(`${serve.url}/health`);
    expect(health.status).toBe(200);
  });

  it("answers the audit's unclosed file part with 400 naming the body", async () => {
    const [path] = uploads;
    // An answer is due here: it may take as long as the machine needs.
    const res = await raw(request(path!, MULTIPART, unclosedPart), "wait", WAIT_MS);
    expect(res).toBe(400);
  });

  it("still takes a whole upload after all of them", async () => {
    const res = await fetch(`${serve.url}/ns/malformed/document/file`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": MULTIPART },
      body: wholeForm,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("queued");
  });
});
