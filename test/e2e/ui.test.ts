/**
 * The memory browser in a real browser: Debian's chromium driven by playwright-core, against a real
 * `memctx serve` (and `memctx ui`) child process. Memories come from a stand-in of an
 * OpenAI-compatible chat model (the LLM extractor's wire format), so each memory's text is exactly
 * what the test chose, HTML and script tags included.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatReply, type FakeModelServer, startFakeModelServer } from "../engine/models/openai-server.js";
import { ROOT, type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { WAIT_MS, until as waitFor } from "../support/wait.js";

const run = promisify(execFile);
const CHROMIUM = "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const IN_CI = Boolean(process.env.CI);
// Set to a folder (docs/ui) to write a screenshot of each screen there.
const SCREENSHOTS = process.env.MEMCTX_UI_SCREENSHOTS;

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(
    `test/e2e/ui.test.ts: skipped: ${CHROMIUM} is missing (apt-get install chromium). In CI (CI set) it must run.`,
  );
}

/** What the page shows, asked again until the assertion holds (bounded as every wait is: WAIT_MS). */
const until = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: WAIT_MS, interval: 100 });

const XSS = "<script>alert(1)</script><b>x</b>";

/**
 * The model's answer for one document: the document's text, verbatim, as one memory; for a
 * conversation, each of the user's turns, verbatim, as one memory.
 */
function factsFor(prompt: string) {
  const text = /<<<\n([\s\S]*)\n>>>/.exec(prompt)?.[1]?.trim() ?? "";
  const turns = text.split("\n");
  if (turns.length > 1 && turns.every((t) => /^(user|assistant): /.test(t))) {
    return {
      facts: turns
        .filter((t) => t.startsWith("user: "))
        .map((t) => ({
          memory: t.slice("user: ".length),
          isStatic: false,
          subject: "user",
          subjectKind: "user",
          attribute: null,
          value: null,
          polarity: "is",
          eventDate: null,
          isInference: false,
        })),
    };
  }
  const home = /^Alice lives in /.test(text);
  return {
    facts: text
      ? [
          {
            memory: text,
            isStatic: home || text === XSS,
            // Each namespace is its user's memory: a note's fact is about that user (Alice in "alice").
            subject: "user",
            subjectKind: "user",
            attribute: home ? "home" : null,
            value: home ? text.slice("Alice lives in ".length, -1) : null,
            polarity: "is",
            eventDate: null,
            isInference: false,
          },
        ]
      : [],
  };
}

function answerEveryChat(fake: FakeModelServer) {
  fake.queue.length = 0;
  for (let i = 0; i < 200; i++) {
    fake.queue.push((req) => {
      const messages = req.body.messages as { role: string; content: string }[];
      const user = messages.find((m) => m.role === "user")?.content ?? "";
      return chatReply(JSON.stringify(factsFor(user)));
    });
  }
}

async function api(url: string, method: string, path: string, body?: unknown, key = TEST_KEY) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of many response shapes.
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function addAndWait(
  url: string,
  ns: string,
  content: string,
  date: string,
  metadata?: Record<string, string>,
  customId?: string,
): Promise<string> {
  const added = await api(url, "POST", `/ns/${ns}/document`, {
    ...(customId ? { id: customId } : {}),
    content,
    date,
    dreaming: "instant",
    ...(metadata ? { metadata } : {}),
  });
  expect(added.status).toBe(200);
  const id = added.body.id as string;
  await waitFor(
    async () => (await api(url, "GET", `/ns/${ns}/document/${id}`)).body,
    (doc) => {
      if (doc.system.status === "failed") throw new Error(`document failed: ${doc.error}`);
      return doc.system.status === "done" && doc.system.dreamingStatus === "done";
    },
    `document ${id} to be processed`,
  );
  return id;
}

async function memoryIdOf(url: string, ns: string, text: string): Promise<string> {
  const listed = await api(url, "POST", `/ns/${ns}/list/memories?limit=100`, {
    include: { forgotten: true },
  });
  const m = (listed.body.memories as { id: string; memory: string }[]).find((x) => x.memory === text);
  if (!m) throw new Error(`no memory '${text}' in ${ns}`);
  return m.id;
}

async function shot(page: Page, name: string) {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

const launchBrowser = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });

describe.skipIf(!HAVE_CHROMIUM && !IN_CI)("the memory browser in chromium", () => {
  let browser: Browser;
  let fake: FakeModelServer;
  let serve: ServeChild;
  let dir: ReturnType<typeof tempDir>;
  const modelEnv = () => ({ MEMCTX_LLM_URL: fake.baseUrl, MEMCTX_LLM_MODEL: "test-model" });

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`${CHROMIUM} is missing: .ci/run installs it with apt-get`);
    browser = await launchBrowser();
    fake = await startFakeModelServer();
    answerEveryChat(fake);
    dir = tempDir();
    serve = await spawnServe(dir.path, modelEnv());
    await addAndWait(serve.url, "alice", "Alice lives in Paris.", "2024-01-01");
    await addAndWait(serve.url, "alice", "Alice lives in Berlin.", "2024-06-01");
    await addAndWait(serve.url, "alice", "Alice plays the cello every Sunday.", "2024-06-02");
    await addAndWait(serve.url, "alice", XSS, "2024-06-03");
    await addAndWait(serve.url, "work", "The team ships on Thursdays.", "2024-06-04");
  });

  afterAll(async () => {
    await browser?.close();
    if (serve) await stopChild(serve);
    await fake?.close();
    dir?.remove();
  });

  async function signedIn(): Promise<{ page: Page; dialogs: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    const dialogs: string[] = [];
    // Any alert, confirm or prompt would mean a script from a memory ran (the page uses <dialog>).
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${serve.url}/ui`);
    await shot(page, "1-sign-in");
    await page.getByLabel("API key").fill(TEST_KEY);
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByLabel("Namespace").selectOption("alice");
    await until(() => page.locator("#memory-count").textContent()).toMatch(/memor(y|ies)/);
    expect(errors).toEqual([]);
    return { page, dialogs };
  }

  it("signs in with a typed key, lists namespaces with counts and memories newest first, HTML as text", async () => {
    const { page, dialogs } = await signedIn();
    // Switching namespaces switches the memories shown.
    await page.getByLabel("Namespace").selectOption("work");
    await until(() => page.locator("#memory-list .memory-text").allTextContents()).toEqual([
      "The team ships on Thursdays.",
    ]);
    await page.getByLabel("Namespace").selectOption("alice");
    await until(() => page.locator("#memory-list .memory-text").count()).toBe(3);
    const namespaces = await page.getByLabel("Namespace").getByRole("option").allTextContents();
    // Counts are of current memories: the superseded Paris version is not one.
    expect(namespaces).toEqual(["alice (3 memories)", "work (1 memory)"]);
    await until(() => page.locator("#namespace-list").textContent()).toContain("4 documents · 3 memories");

    const memories = page.locator("#memory-list > li");
    const texts = await memories.locator(".memory-text").allTextContents();
    // Newest first; the superseded Paris version is not among the current memories.
    expect(texts).toEqual([XSS, "Alice plays the cello every Sunday.", "Alice lives in Berlin."]);
    // The memory holding markup is shown as text: no element was made from it, no script ran.
    const xss = memories.filter({ hasText: XSS });
    expect(await xss.locator(".memory-text").textContent()).toBe(XSS);
    expect(await xss.locator("script, b").count()).toBe(0);
    expect(dialogs).toEqual([]);
    // Each memory says where it came from.
    expect(
      await memories.filter({ hasText: "Alice lives in Berlin." }).locator(".meta").textContent(),
    ).toMatch(/Remembered \d{4}-\d\d-\d\d \d\d:\d\d UTC · from Alice lives in Berlin\./);
    await shot(page, "2-memories");

    // Forgotten and superseded ones on request.
    await page.getByLabel("Show forgotten and superseded memories").check();
    await until(() => memories.count()).toBe(4);
    expect(await memories.filter({ hasText: "Alice lives in Paris." }).textContent()).toContain("superseded");
    await page.context().close();
  });

  it("shows a memory's version history: earlier and newer versions", async () => {
    const { page } = await signedIn();
    const berlin = page.getByRole("listitem").filter({ hasText: "Alice lives in Berlin." });
    await berlin.getByRole("button", { name: "Details and history" }).click();
    const parents = berlin.getByRole("region", { name: "Earlier versions (parents)" });
    await until(() => parents.textContent()).toContain("Alice lives in Paris.");
    expect(await berlin.getByRole("region", { name: "Newer versions (children)" }).textContent()).toContain(
      "No newer version",
    );
    expect(
      await berlin.getByRole("button", { name: "Details and history" }).getAttribute("aria-expanded"),
    ).toBe("true");
    await shot(page, "3-version-history");
    await page.context().close();
  });

  it("searches with a mode and a threshold, shows similarities, and forgets a memory after confirmation", async () => {
    const { page } = await signedIn();
    await page.getByRole("tab", { name: "Search" }).click();
    const box = page.getByRole("searchbox", { name: "Search" });
    expect(await box.getAttribute("type")).toBe("search");
    await box.fill("where does Alice live");
    await page.getByLabel("Mode").selectOption("memories");
    await page.getByLabel("Threshold").fill("0.1");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const results = page.locator("#search-results > li");
    await until(() => results.count()).toBeGreaterThan(0);
    const first = results.first();
    expect(await first.locator(".memory-text").textContent()).toBe("Alice lives in Berlin.");
    expect(await first.locator(".score").textContent()).toMatch(/^similarity (0|1)\.\d\d$/);
    expect(await first.textContent()).toContain("Earlier: Alice lives in Paris.");
    expect(await page.locator("#search-info").textContent()).toMatch(
      /for “where does Alice live” \(memories, threshold 0\.1\)/,
    );
    await shot(page, "4-search");

    // Forget: a confirmation first; Cancel keeps the memory.
    const berlinId = await memoryIdOf(serve.url, "alice", "Alice lives in Berlin.");
    await first.getByRole("button", { name: "Forget" }).click();
    const dialog = page.getByRole("dialog", { name: "Forget this memory?" });
    await dialog.waitFor();
    await shot(page, "5-forget-confirm");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect((await api(serve.url, "GET", `/ns/alice/memories/${berlinId}`)).body.isForgotten).toBe(false);

    await first.getByRole("button", { name: "Forget" }).click();
    await dialog.getByRole("button", { name: "Forget memory" }).click();
    await until(() => page.locator("#status").textContent()).toBe("Forgot: Alice lives in Berlin.");
    // The API, asked on its own, reports it forgotten; search no longer returns it.
    const after = await api(serve.url, "GET", `/ns/alice/memories/${berlinId}`);
    expect(after.body).toMatchObject({ id: berlinId, isForgotten: true });
    await until(async () =>
      (await results.locator(".memory-text").allTextContents()).includes("Alice lives in Berlin."),
    ).toBe(false);
    await page.context().close();
  });

  it("forgets by meaning: a dry run lists the matches, then exactly those are forgotten", async () => {
    const { page } = await signedIn();
    await page.getByLabel("Forget by meaning").fill("cello");
    await page.getByRole("button", { name: "Find matches" }).click();
    const preview = page.getByRole("group", { name: "Dry run matches" });
    await until(() => preview.textContent()).toContain("Alice plays the cello every Sunday.");
    const celloId = await memoryIdOf(serve.url, "alice", "Alice plays the cello every Sunday.");
    // The dry run changed nothing.
    expect((await api(serve.url, "GET", `/ns/alice/memories/${celloId}`)).body.isForgotten).toBe(false);
    await shot(page, "6-forget-by-meaning");
    await preview.getByRole("button", { name: /^Forget \d+ memor/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Forget them" }).click();
    await until(() => page.locator("#status").textContent()).toMatch(/^Forgot \d+ memor/);
    expect((await api(serve.url, "GET", `/ns/alice/memories/${celloId}`)).body.isForgotten).toBe(true);
    await page.context().close();
  });

  it("shows documents with state, chunks and memories; adds a note and deletes a document", async () => {
    const { page } = await signedIn();
    await page.getByRole("tab", { name: "Documents" }).click();
    const docs = page.locator("#document-list > li");
    await until(() => docs.count()).toBe(4);
    // Paris's document was titled with its one sentence, forgotten with the Berlin memory that
    // replaced it: the list shows it by its date, without that title.
    const paris = docs.filter({ hasText: "dated 2024-01-01" });
    expect(await paris.count()).toBe(1);
    expect(await paris.textContent()).not.toContain("Alice lives in Paris.");
    expect(await paris.locator(".badge").allTextContents()).toEqual(["done", "memories done"]);
    // Paris's one sentence left its passages when the Berlin memory that replaced it was forgotten
    // (an earlier version goes with its latest): another document shows its chunks.
    const markup = docs.filter({ hasText: XSS });
    await markup.getByRole("button", { name: "Open" }).click();
    await until(() => markup.locator(".chunks li").count()).toBeGreaterThan(0);
    expect(await markup.getByRole("heading", { name: /Memories drawn from it/ }).textContent()).toBe(
      "Memories drawn from it (1)",
    );
    await shot(page, "7-documents");

    await page.getByLabel("Add a note").fill("Alice adopted a cat named Miso.");
    await page.getByRole("button", { name: "Add note" }).click();
    await until(() => docs.filter({ hasText: "Alice adopted a cat named Miso." }).count()).toBe(1);
    await until(async () =>
      (await api(serve.url, "POST", "/ns/alice/list/memories?limit=100", {})).body.memories.map(
        (m: { memory: string }) => m.memory,
      ),
    ).toContain("Alice adopted a cat named Miso.");

    await paris.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete document" }).click();
    await until(() => docs.filter({ hasText: "dated 2024-01-01" }).count()).toBe(0);
    const listed = await api(serve.url, "POST", "/ns/alice/list/documents?limit=100", {});
    expect(listed.body.documents.map((d: { content: string }) => d.content)).not.toContain(
      "Alice lives in Paris.",
    );
    await page.context().close();
  });

  it("shows the profile, edits the supporting context and lists connectors with a sync button", async () => {
    const created = await api(serve.url, "POST", "/ns/alice/connectors", {
      provider: "web-crawler",
      config: { startUrl: "https://example.invalid/" },
    });
    expect(created.status).toBe(200);
    const { page } = await signedIn();
    await page.getByRole("tab", { name: "Profile" }).click();
    const staticFacts = page.getByRole("region", { name: "Static: lasting facts" });
    await until(() => staticFacts.textContent()).toContain(XSS);
    await page.getByRole("region", { name: "preferences" }).waitFor();
    await shot(page, "8-profile");

    await page.getByRole("tab", { name: "Settings" }).click();
    await page.getByLabel("Supporting context").fill("Alice is the user; her home and hobbies matter.");
    await page.getByRole("button", { name: "Save context" }).click();
    await until(() => page.locator("#status").textContent()).toBe("Supporting context saved.");
    expect((await api(serve.url, "GET", "/ns/alice")).body.supportingContext).toBe(
      "Alice is the user; her home and hobbies matter.",
    );
    await shot(page, "9-settings");

    await page.getByRole("tab", { name: "Connectors" }).click();
    const connector = page.locator("#connector-list > li").filter({ hasText: "web-crawler" });
    await connector.waitFor();
    expect(await connector.textContent()).toContain("https://example.invalid/");
    // A sync may already run from the creation: then the API's 409 is shown, else it starts.
    await connector.getByRole("button", { name: "Sync now" }).click();
    await until(
      async () =>
        `${await page.locator("#status").textContent()}|${await page.locator("#error").textContent()}`,
    ).toMatch(/Sync of web-crawler started|already running/i);
    await until(() => connector.textContent()).toMatch(/Last sync: \w+/);
    await shot(page, "10-connectors");
    await page.context().close();
  });

  /** Signed in, with `ns` open on the memories view. */
  async function openedAt(ns: string): Promise<Page> {
    const { page } = await signedIn();
    await page.getByLabel("Namespace").selectOption(ns);
    await until(() => page.locator("#memory-count").textContent()).toMatch(/memor(y|ies)/);
    return page;
  }

  const shown = (page: Page) => page.locator("#memory-list .memory-text").allTextContents();

  it("filters the memory list by document, by text and by date", async () => {
    await addAndWait(serve.url, "bob-filter", "Bob drinks black tea every morning.", "2024-07-01");
    const chessDoc = await addAndWait(
      serve.url,
      "bob-filter",
      "Bob plays chess on Wednesdays.",
      "2024-07-02",
    );
    await addAndWait(serve.url, "bob-filter", "Bob's tea kettle is copper.", "2024-07-03");
    const page = await openedAt("bob-filter");
    await until(() => shown(page)).toHaveLength(3);

    // By document: the API's own filter.
    await page.getByLabel("Document", { exact: true }).selectOption(chessDoc);
    await until(() => shown(page)).toEqual(["Bob plays chess on Wednesdays."]);
    expect(await page.locator("#memory-count").textContent()).toBe(
      "1 memory from this document, newest first.",
    );
    await page.getByRole("button", { name: "Clear filter" }).click();
    await until(() => shown(page)).toHaveLength(3);

    // By text, any case.
    await page.getByLabel("Text contains").fill("TEA");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await until(() => shown(page)).toEqual([
      "Bob's tea kettle is copper.",
      "Bob drinks black tea every morning.",
    ]);
    expect(await page.locator("#memory-count").textContent()).toBe("2 memories match the filter.");

    // By the day they were remembered (today, UTC): a range after today or before it holds none.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("Text contains").fill("");
    await page.getByLabel("Remembered from").fill(day(1));
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await until(() => page.locator("#memory-count").textContent()).toBe("0 memories match the filter.");
    await page.getByLabel("Remembered from").fill(day(-1));
    await page.getByLabel("Remembered until").fill(day(0));
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await until(() => shown(page)).toHaveLength(3);
    await page.getByLabel("Remembered until").fill(day(-1));
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await until(() => page.locator("#memory-count").textContent()).toBe("0 memories match the filter.");
    await shot(page, "11-filter");
    // Another namespace starts unfiltered.
    await page.getByLabel("Namespace").selectOption("work");
    await until(() => shown(page)).toEqual(["The team ships on Thursdays."]);
    expect(await page.getByLabel("Remembered until").inputValue()).toBe("");
    await page.context().close();
  });

  it("edits a memory into a new version, and shows a memory's metadata and source", async () => {
    await addAndWait(serve.url, "bob-edit", "Bob drinks black tea every morning.", "2024-07-01", {
      project: "breakfast",
    });
    await addAndWait(serve.url, "bob-edit", "Bob's bike is a blue Brompton.", "2024-07-02", {
      project: "commute",
    });
    const oldId = await memoryIdOf(serve.url, "bob-edit", "Bob drinks black tea every morning.");
    const page = await openedAt("bob-edit");

    // Details: metadata, the source document and the passage the memory came from.
    const bike = page.locator("#memory-list > li").filter({ hasText: "Bob's bike is a blue Brompton." });
    await bike.getByRole("button", { name: "Details and history" }).click();
    const details = bike.getByRole("region", { name: "Details" });
    await until(() => details.textContent()).toContain("commute");
    expect(await details.textContent()).toMatch(
      /Document Bob's bike is a blue Brompton\. \(text, id \S+, dated 2024-07-02\)/,
    );
    expect(await details.locator(".passage").textContent()).toBe("Bob's bike is a blue Brompton.");

    const tea = page.locator("#memory-list > li").filter({ hasText: "Bob drinks black tea every morning." });
    await tea.getByRole("button", { name: "Edit" }).click();
    await tea.getByLabel("Corrected text").fill("Bob drinks green tea every morning.");
    await shot(page, "12-edit");
    await tea.getByRole("button", { name: "Save new version" }).click();
    await until(() => page.locator("#status").textContent()).toBe(
      "Saved as version 2: Bob drinks green tea every morning.",
    );
    await until(() => shown(page)).toContain("Bob drinks green tea every morning.");
    expect(await shown(page)).not.toContain("Bob drinks black tea every morning.");
    // The API, asked on its own: the old text is the new version's parent, no longer latest.
    const newId = await memoryIdOf(serve.url, "bob-edit", "Bob drinks green tea every morning.");
    const read = await api(serve.url, "GET", `/ns/bob-edit/memories/${newId}?include=related`);
    expect(read.body).toMatchObject({
      version: 2,
      isLatest: true,
      parentMemoryId: oldId,
      metadata: { project: "breakfast" },
    });
    expect(read.body.included.related.parents.map((m: { memory: string }) => m.memory)).toEqual([
      "Bob drinks black tea every morning.",
    ]);
    const green = page
      .locator("#memory-list > li")
      .filter({ hasText: "Bob drinks green tea every morning." });
    await green.getByRole("button", { name: "Details and history" }).click();
    await until(() =>
      green.getByRole("region", { name: "Earlier versions (parents)" }).textContent(),
    ).toContain("Bob drinks black tea every morning.");
    expect(await green.getByRole("region", { name: "Details" }).textContent()).toContain(
      "No source document",
    );
    await page.context().close();
  });

  it("forgets a memory (its passage leaves search), restores it as a new memory, and drops banners with their view", async () => {
    await addAndWait(serve.url, "bob-forget", "Owner: Tomasz.", "2024-07-01");
    await addAndWait(serve.url, "bob-forget", "The release ships on Monday.", "2024-07-02");
    const ownerId = await memoryIdOf(serve.url, "bob-forget", "Owner: Tomasz.");
    const page = await openedAt("bob-forget");
    const owner = page.locator("#memory-list > li").filter({ hasText: "Owner: Tomasz." });
    await owner.getByRole("button", { name: "Forget" }).click();
    const dialog = page.getByRole("dialog", { name: "Forget this memory?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(
      /taken out of its document's passages.*document itself stays stored/s,
    );
    await dialog.getByRole("button", { name: "Forget memory" }).click();
    await until(() => page.locator("#status").textContent()).toBe("Forgot: Owner: Tomasz.");

    // Another view: the banner goes. A hybrid search no longer finds the source passage.
    await page.getByRole("tab", { name: "Search" }).click();
    expect(await page.locator("#status").textContent()).toBe("");
    await page.getByRole("searchbox", { name: "Search" }).fill("Tomasz");
    await page.getByLabel("Threshold").fill("0");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await until(() => page.locator("#search-info").textContent()).toMatch(/for “Tomasz”/);
    expect(await page.locator("#search-results").textContent()).not.toContain("Tomasz");

    // Restore: the dialog says the API has no un-forget and what happens instead.
    await page.getByRole("tab", { name: "Memories" }).click();
    await page.getByLabel("Show forgotten and superseded memories").check();
    const forgotten = page.locator("#memory-list > li.forgotten").filter({ hasText: "Owner: Tomasz." });
    await forgotten.getByRole("button", { name: "Restore" }).click();
    const restore = page.getByRole("dialog", { name: "Restore this memory?" });
    await restore.waitFor();
    expect(await restore.textContent()).toContain("The API has no way to un-forget a memory");
    await shot(page, "13-restore");
    await restore.getByRole("button", { name: "Restore as a new memory" }).click();
    await until(() => page.locator("#status").textContent()).toBe("Restored as a new memory: Owner: Tomasz.");
    const live = await api(serve.url, "POST", "/ns/bob-forget/list/memories?limit=100", {});
    const restored = live.body.memories.filter((m: { memory: string }) => m.memory === "Owner: Tomasz.");
    expect(restored).toHaveLength(1);
    expect(restored[0].id).not.toBe(ownerId);
    expect((await api(serve.url, "GET", `/ns/bob-forget/memories/${ownerId}`)).body.isForgotten).toBe(true);

    // Another namespace: the banner goes too.
    await page.getByLabel("Namespace").selectOption("work");
    await until(() => page.locator("#status").textContent()).toBe("");
    await page.context().close();
  });

  it("keeps keyboard users able to switch views with the arrow keys", async () => {
    const { page } = await signedIn();
    await page.getByRole("tab", { name: "Memories" }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("tab", { name: "Search" }).getAttribute("aria-selected")).toBe("true");
    expect(await page.getByRole("tabpanel", { name: "Search" }).isVisible()).toBe(true);
    await page.keyboard.press("End");
    expect(await page.getByRole("tab", { name: "Settings" }).getAttribute("aria-selected")).toBe("true");
    await page.context().close();
  });

  it("holds a key's namespace restriction: a key for 'work' sees only 'work'", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "src/cli/main.ts"),
        "keys",
        "create",
        "--namespace",
        "work",
        "--data-dir",
        dir.path,
      ],
      { cwd: ROOT },
    );
    const key = stdout.trim();
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${serve.url}/ui`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Connect" }).click();
    await until(() => page.locator("#memory-count").textContent()).toBe("1 memory, newest first.");
    expect(await page.getByLabel("Namespace").locator("option").allTextContents()).toEqual([
      "work (1 memory)",
    ]);
    expect(await page.locator("#memory-list .memory-text").allTextContents()).toEqual([
      "The team ships on Thursdays.",
    ]);
    // Even a page that asked for another namespace gets the API's 403.
    const other = await page.evaluate(async (k) => {
      const res = await fetch("/ns/alice/list/memories", {
        method: "POST",
        headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
        body: "{}",
      });
      return res.status;
    }, key);
    expect(other).toBe(403);
    await page.context().close();
  });

  it("numbers a memory's passage among the passages its document still has, after forgetting removed one", async () => {
    const ns = "bob-passage";
    const conversation = [
      "user: Bob drinks black tea every morning.",
      "assistant: Noted, black tea.",
      "user: Bob cycles to work on a blue Brompton.",
      "assistant: A good bike.",
      "user: Bob's sister lives in Lisbon.",
    ].join("\n");
    const doc = await addAndWait(serve.url, ns, conversation, "2024-07-01");
    // Forgotten, the first turn's memory empties that turn's passage, which goes; the others keep
    // their stored positions, so the positions now have a gap.
    const teaId = await memoryIdOf(serve.url, ns, "Bob drinks black tea every morning.");
    expect((await api(serve.url, "DELETE", `/ns/${ns}/memories`, { ids: [teaId] })).status).toBe(200);
    const chunks = (await api(serve.url, "GET", `/ns/${ns}/document/${doc}?include=chunks`)).body.chunks as {
      position: number;
      content: string;
    }[];
    expect(Math.max(...chunks.map((c) => c.position)) + 1).toBeGreaterThan(chunks.length);
    const lisbonAt = chunks.findIndex((c) => c.content.includes("Lisbon")) + 1;
    expect(lisbonAt).toBe(chunks.length);

    const page = await openedAt(ns);
    const lisbon = page.locator("#memory-list > li").filter({ hasText: "Bob's sister lives in Lisbon." });
    await lisbon.getByRole("button", { name: "Details and history" }).click();
    const details = lisbon.getByRole("region", { name: "Details" });
    await until(() => details.locator(".passage").textContent()).toContain("Bob's sister lives in Lisbon.");
    expect(await details.textContent()).toContain(
      `Passage ${lisbonAt} of ${chunks.length}, the one sharing most of its words:`,
    );
    await page.context().close();
  });

  /** Signed in on a window `width` px wide and a phone's 844 px high, with `ns` open on its memories. */
  async function signedInAt(width: number, ns: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width, height: 844 } })).newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${serve.url}/ui`);
    await page.getByLabel("API key").fill(TEST_KEY);
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByLabel("Namespace", { exact: true }).selectOption(ns);
    // The list of the namespace opened first is replaced: wait for this one's newest memory.
    const newest = await api(serve.url, "POST", `/ns/${ns}/list/memories?limit=1`, {});
    await until(() => page.locator("#memory-list .memory-text").first().textContent()).toBe(
      newest.body.memories[0].memory,
    );
    expect(errors).toEqual([]);
    return page;
  }

  /** How far the page reaches past the window's right edge: 0 when it cannot scroll sideways. */
  const sideways = (page: Page) =>
    page.evaluate(
      () => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth,
    );

  /** Opens a folded disclosure (a phone folds the filter and forget-by-meaning forms). */
  async function unfold(page: Page, id: string) {
    const box = page.locator(`#${id}`);
    if (!(await box.evaluate((d) => (d as HTMLDetailsElement).open))) await box.locator("summary").click();
  }

  it("never scrolls sideways at 390 or 1280 px, on any tab, with long ids, titles, words and a filter", async () => {
    const word = "Pneumonoultramicroscopicsilicovolcanoconiosis".repeat(3);
    const url = `https://example.invalid/${"a-long-path-segment/".repeat(10)}end`;
    const ns = `layout-${"n".repeat(60)}`;
    const customId = `harbor-queue-manual-${"0123456789abcdef".repeat(4)}`;
    const manual = await addAndWait(
      serve.url,
      ns,
      `Harbor Queue Operator Manual for the Northern Europe Regional Deployment of ${word}`,
      "2024-08-01",
      { source: url },
      customId,
    );
    await addAndWait(serve.url, ns, `Bob reads ${url} every morning before ${word}.`, "2024-08-02");
    const connector = { provider: "web-crawler", config: { startUrl: url } };
    expect((await api(serve.url, "POST", `/ns/${ns}/connectors`, connector)).status).toBe(200);
    expect(
      (await api(serve.url, "PATCH", `/ns/${ns}`, { supportingContext: `The user is ${word}.` })).status,
    ).toBe(200);

    for (const width of [390, 1280]) {
      const page = await signedInAt(width, ns);
      const check = async (view: string) => {
        expect(await sideways(page), `${width} px, ${view}`).toBe(0);
        await shot(page, `${width}-${view}`);
      };
      const memories = page.locator("#memory-list > li");
      // Within reach: the newest memory and its buttons are on the first screen, unscrolled.
      const forget = await memories.first().getByRole("button", { name: "Forget" }).boundingBox();
      expect(forget!.y + forget!.height, `${width} px: the first memory's buttons`).toBeLessThanOrEqual(844);
      await check("memories");

      // Filtered by the long-titled document, with the memory's details (its long ids) and editor open.
      await unfold(page, "filter-box");
      await page.getByLabel("Document", { exact: true }).selectOption(manual);
      await until(() => page.locator("#memory-count").textContent()).toBe(
        "1 memory from this document, newest first.",
      );
      await memories.first().getByRole("button", { name: "Details and history" }).click();
      await until(() => memories.first().getByRole("region", { name: "Details" }).textContent()).toContain(
        customId,
      );
      await memories.first().getByRole("button", { name: "Edit" }).click();
      await check("memories-filtered-details");

      await unfold(page, "forget-box");
      await page.getByLabel("Forget by meaning").fill(word);
      await page.getByRole("button", { name: "Find matches" }).click();
      await page.getByRole("group", { name: "Dry run matches" }).waitFor();
      await check("memories-forget-by-meaning");

      await page.getByRole("tab", { name: "Search" }).click();
      await page.getByRole("searchbox", { name: "Search" }).fill(word);
      await page.getByLabel("Threshold").fill("0");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await until(() => page.locator("#search-info").textContent()).toContain(`for “${word}”`);
      expect(await page.locator("#search-results > li").count()).toBeGreaterThan(0);
      await check("search");

      await page.getByRole("tab", { name: "Profile" }).click();
      await until(() => page.locator("#profile").textContent()).toContain(word);
      await check("profile");

      await page.getByRole("tab", { name: "Documents" }).click();
      const doc = page.locator("#document-list > li").filter({ hasText: "Harbor Queue Operator Manual" });
      await doc.getByRole("button", { name: "Open" }).click();
      await until(() => doc.locator(".chunks li").count()).toBeGreaterThan(0);
      await check("documents");

      await page.getByRole("tab", { name: "Connectors" }).click();
      await until(() => page.locator("#connector-list").textContent()).toContain(url);
      await check("connectors");

      await page.getByRole("tab", { name: "Settings" }).click();
      await until(() => page.getByLabel("Supporting context").inputValue()).toContain(word);
      await until(() => page.locator("#namespace-facts").textContent()).toContain(ns);
      await check("settings");
      await page.context().close();
    }
  });

  it("on a new server: one namespace in the selector and the list, and empty views that say what to do next", async () => {
    const freshDir = tempDir();
    const fresh = await spawnServe(freshDir.path, modelEnv());
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(`${fresh.url}/ui`);
      await page.getByLabel("API key").fill(TEST_KEY);
      await page.getByRole("button", { name: "Connect" }).click();
      await until(() => page.locator("#memory-count").textContent()).toBe(
        "No memories in this namespace yet.",
      );
      // The selector and the list name the same namespaces, from one list.
      const options = () => page.getByLabel("Namespace", { exact: true }).locator("option").allTextContents();
      const listed = page.locator("#namespace-list > li");
      expect(await options()).toEqual(["default (empty)"]);
      expect(await listed.getByRole("button").allTextContents()).toEqual(["default"]);
      expect(await listed.textContent()).toContain("empty: nothing stored yet");

      // Each empty view says how memories get here.
      const install = "memctx install <client>";
      expect(await page.locator("#memories-empty").textContent()).toContain(install);
      await shot(page, "1280-memories-empty");
      await page.getByRole("tab", { name: "Search" }).click();
      await page.getByRole("searchbox", { name: "Search" }).fill("anything");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await until(() => page.locator("#search-empty").textContent()).toContain(install);
      await page.getByRole("tab", { name: "Profile" }).click();
      await until(() => page.locator("#profile").textContent()).toContain(install);
      await page.getByRole("tab", { name: "Documents" }).click();
      await until(() => page.locator("#documents-empty").textContent()).toContain(install);

      // "add a note" leads to the form, and the note's memory ends both namespace views' "empty".
      await page.getByRole("tab", { name: "Memories" }).click();
      await page.locator("#memories-empty").getByRole("button", { name: "add a note" }).click();
      expect(await page.getByRole("tab", { name: "Documents" }).getAttribute("aria-selected")).toBe("true");
      await until(() => page.evaluate(() => document.activeElement?.id)).toBe("note");
      await page.keyboard.type("Alice adopted a cat named Miso.");
      await page.getByRole("button", { name: "Add note" }).click();
      await page.getByRole("tab", { name: "Memories" }).click();
      await until(async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return options();
      }).toEqual(["default (1 memory)"]);
      expect(await listed.getByRole("button").allTextContents()).toEqual(["default"]);
      expect(await listed.textContent()).toContain("1 document · 1 memory");
      await until(() => page.locator("#memory-list .memory-text").allTextContents()).toEqual([
        "Alice adopted a cat named Miso.",
      ]);
      expect(await page.locator("#memories-empty").textContent()).toBe("");
      await page.context().close();
    } finally {
      await stopChild(fresh);
      freshDir.remove();
    }
  });

  it("memctx ui opens the page signed in with a one-time token, then revokes its key on exit", async () => {
    const uiDir = tempDir();
    const child = await spawnUi(uiDir.path);
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(child.link);
      await page.getByLabel("Namespace").waitFor();
      // The token left the address bar; the key sits in this tab's session storage only.
      expect(page.url()).toBe(`${child.origin}/ui`);
      const key = await page.evaluate(() => sessionStorage.getItem("memctx.apiKey"));
      expect(key).toMatch(/^mk_/);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect((await api(child.origin, "GET", "/namespaces", undefined, key!)).status).toBe(200);
      // The token worked once.
      const token = new URL(child.link).hash.slice("#token=".length);
      const again = await fetch(`${child.origin}/ui/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token }),
      });
      expect(again.status).toBe(403);
      await shot(page, "0-memctx-ui");
      await page.context().close();
      child.process.kill("SIGTERM");
      await child.exited;
      // Its key is revoked: a server on the same data directory refuses it.
      const after = await spawnServe(uiDir.path);
      try {
        expect((await api(after.url, "GET", "/namespaces", undefined, key!)).status).toBe(401);
      } finally {
        await stopChild(after);
      }
    } finally {
      if (child.process.exitCode === null) child.process.kill("SIGKILL");
      uiDir.remove();
    }
  });
});

/** `memctx ui --no-browser` as a child process; resolves with the link it prints. */
async function spawnUi(dataDir: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "ui", "--no-browser", "--data-dir", dataDir],
    { cwd: ROOT, env: { ...process.env, MEMCTX_API_KEY: "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<unknown>((res) => child.once("exit", res));
  const link = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`memctx ui did not start: ${out}`)), 20_000);
    child.stdout!.on("data", () => {
      const m = /open (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    void exited.then(() => rej(new Error(`memctx ui exited: ${out}`)));
  });
  return { process: child, link, origin: new URL(link).origin, exited };
}
