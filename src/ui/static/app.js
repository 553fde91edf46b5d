/**
 * The memory browser: namespaces, profile, memories with their versions, documents, connectors and
 * search of one memctx server, through its v5 API with the user's key. Every string from the API
 * reaches the page through dom.js (text nodes only).
 */
import { ApiError, createApi } from "./api.js";
import { badge, byId, h, plural, replace, when } from "./dom.js";

const KEY_STORAGE = "memctx.apiKey";
const NS_STORAGE = "memctx.namespace";
// A document still being processed is read again after this long.
const POLL_MS = 1500;

const state = {
  key: sessionStorage.getItem(KEY_STORAGE),
  namespace: sessionStorage.getItem(NS_STORAGE),
  namespaces: [],
  tab: "memories",
  memoriesPage: 1,
  documentsPage: 1,
  /** Document id -> title, for the "from" line of memories. */
  titles: new Map(),
  pollTimer: 0,
  /** Per list, the number of its latest load: an answer to an older load is dropped. */
  loads: { memories: 0, documents: 0, search: 0 },
};

/** Starts a load of `list`; the returned function tells whether a newer load has started since. */
function beginLoad(list) {
  const n = ++state.loads[list];
  return () => n !== state.loads[list];
}

const api = createApi(() => state.key);

// ---------- messages ----------

function say(message) {
  byId("status").textContent = message;
}

function fail(err) {
  const message = err instanceof ApiError || err instanceof Error ? err.message : String(err);
  byId("error").textContent = message;
  if (err instanceof ApiError && err.status === 401) signOut("The API key was refused (unknown or revoked).");
}

function clearError() {
  byId("error").textContent = "";
}

/** What one view said (status, error, a dry run's matches) goes when the view or namespace changes. */
function clearBanners() {
  say("");
  clearError();
  replace(byId("forget-meaning-result"));
}

/** Runs an action, showing its error instead of throwing. */
async function attempt(fn) {
  clearError();
  try {
    return await fn();
  } catch (err) {
    fail(err);
    return undefined;
  }
}

// ---------- confirmation ----------

/** A modal question; resolves true when the user confirms. */
function confirmAction({ title, text, items = [], ok, destructive = true }) {
  const dialog = byId("confirm");
  byId("confirm-title").textContent = title;
  byId("confirm-text").textContent = text;
  replace(byId("confirm-list"), ...items.map((item) => h("li", { text: item })));
  byId("confirm-ok").textContent = ok;
  byId("confirm-ok").classList.toggle("danger", destructive);
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
    byId("confirm-cancel").focus();
  });
}

// ---------- signing in ----------

async function start() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get("token");
  if (token) {
    // The token must not stay in the address bar, the history or a bookmark.
    history.replaceState(null, "", location.pathname + location.search);
    const answer = await attempt(() => api.exchangeToken(token));
    if (answer?.key) setKey(answer.key);
  }
  if (state.key) await connect();
  else showSignedOut();
}

function setKey(key) {
  state.key = key;
  sessionStorage.setItem(KEY_STORAGE, key);
}

function signOut(reason) {
  state.key = null;
  sessionStorage.removeItem(KEY_STORAGE);
  showSignedOut();
  if (reason) byId("error").textContent = reason;
}

function showSignedOut() {
  clearTimeout(state.pollTimer);
  byId("key-form").hidden = false;
  byId("signed-in").hidden = true;
  byId("app").hidden = true;
  byId("welcome").hidden = false;
  say("");
}

async function connect() {
  const ok = await attempt(async () => {
    await loadNamespaces();
    return true;
  });
  if (!ok) return;
  byId("key-form").hidden = true;
  byId("signed-in").hidden = false;
  byId("who").textContent = `Connected to ${location.host}`;
  byId("welcome").hidden = true;
  byId("app").hidden = false;
  byId("api-key").value = "";
  await openNamespace(state.namespace);
}

// ---------- empty views ----------

/** What an empty view says to do next: connect an agent (memctx install) or add a note here. */
function nextSteps(intro) {
  return h(
    "div",
    { class: "card empty" },
    h("p", { text: intro }),
    h(
      "ul",
      {},
      h(
        "li",
        {},
        "an agent: run ",
        h("code", { text: "memctx install <client>" }),
        " in a terminal (claude-desktop, claude-code, cursor or vscode), then restart that client;",
      ),
      h(
        "li",
        {},
        "a note: ",
        h("button", { type: "button", class: "link", text: "add a note", onclick: goToNote }),
        " under Documents; memories are drawn from it once it is processed.",
      ),
    ),
  );
}

/** Whether the open namespace holds nothing (as the namespace list last said). */
function currentIsEmpty() {
  const c = namespaceChoices().find((n) => n.name === state.namespace);
  return !c || c.empty || (c.documentCount === 0 && c.memoryCount === 0);
}

async function goToNote() {
  // showTab shows the panel before it loads the documents: the form can take the focus at once.
  const shown = showTab("documents");
  byId("note").focus();
  await shown;
}

// ---------- namespaces ----------

async function loadNamespaces() {
  const { namespaces } = await api.namespaces();
  state.namespaces = namespaces;
  renderNamespaces();
}

/**
 * The namespaces the page offers, for the selector and the sidebar alike: the API's, and the one
 * open when the API has no record of it yet (nothing stored there: "default" on a new server).
 */
function namespaceChoices() {
  const choices = state.namespaces.map((n) => ({
    name: n.namespace,
    documentCount: n.documentCount,
    memoryCount: n.memoryCount,
  }));
  const open = state.namespace ?? "default";
  if (!choices.some((c) => c.name === open)) choices.push({ name: open, empty: true });
  return choices;
}

function renderNamespaces() {
  const choices = namespaceChoices();
  const select = byId("namespace");
  replace(
    select,
    ...choices.map((c) =>
      h("option", {
        value: c.name,
        text: c.empty ? `${c.name} (empty)` : `${c.name} (${plural(c.memoryCount, "memory", "memories")})`,
      }),
    ),
  );
  if (state.namespace) select.value = state.namespace;
  replace(
    byId("namespace-list"),
    ...choices.map((c) =>
      h(
        "li",
        { class: c.name === state.namespace ? "current" : "" },
        h("button", {
          type: "button",
          class: "link",
          text: c.name,
          "aria-current": c.name === state.namespace ? "true" : undefined,
          onclick: () => openNamespace(c.name),
        }),
        h(
          "span",
          { class: "muted" },
          c.empty
            ? "empty: nothing stored yet"
            : `${plural(c.documentCount, "document", "documents")} · ${plural(c.memoryCount, "memory", "memories")}`,
        ),
      ),
    ),
  );
}

async function openNamespace(name) {
  const names = state.namespaces.map((n) => n.namespace);
  const previous = state.namespace;
  state.namespace =
    name && (names.includes(name) || name === state.namespace) ? name : (names[0] ?? "default");
  sessionStorage.setItem(NS_STORAGE, state.namespace);
  state.titles.clear();
  renderNamespaces();
  beginLoad("search");
  replace(byId("search-results"));
  replace(byId("search-empty"));
  byId("search-info").textContent = "";
  // A filter names this namespace's documents: another namespace starts unfiltered.
  resetMemoryFilter();
  if (previous !== state.namespace) clearBanners();
  else replace(byId("forget-meaning-result"));
  await showTab(state.tab);
}

async function refreshCounts() {
  await attempt(loadNamespaces);
}

// ---------- tabs ----------

const TABS = ["memories", "search", "profile", "documents", "connectors", "settings"];

async function showTab(tab) {
  if (tab !== state.tab) clearBanners();
  state.tab = tab;
  clearTimeout(state.pollTimer);
  for (const t of TABS) {
    const button = byId(`tab-${t}`);
    button.setAttribute("aria-selected", String(t === tab));
    button.tabIndex = t === tab ? 0 : -1;
    byId(`panel-${t}`).hidden = t !== tab;
  }
  if (tab === "memories") await loadMemories(true);
  else if (tab === "profile") await loadProfile();
  else if (tab === "documents") await loadDocuments(true);
  else if (tab === "connectors") await loadConnectors();
  else if (tab === "settings") await loadSettings();
}

function tabKeys(event) {
  const i = TABS.indexOf(state.tab);
  const next =
    event.key === "ArrowRight"
      ? TABS[(i + 1) % TABS.length]
      : event.key === "ArrowLeft"
        ? TABS[(i + TABS.length - 1) % TABS.length]
        : event.key === "Home"
          ? TABS[0]
          : event.key === "End"
            ? TABS[TABS.length - 1]
            : null;
  if (!next) return;
  event.preventDefault();
  byId(`tab-${next}`).focus();
  void showTab(next);
}

// ---------- memories ----------

async function documentTitles() {
  if (state.titles.size > 0) return;
  const { documents } = await api.listDocuments(state.namespace, 1, 100).catch(() => ({ documents: [] }));
  for (const d of documents) state.titles.set(d.id, d.title || d.id);
}

/** Memories a text or date filter looks through, newest first (the API filters neither). */
const FILTER_SCAN_MAX = 1000;
/** Page size of that scan (the API's most per page). */
const FILTER_SCAN_PAGE = 100;

function memoryFilter() {
  return {
    documentId: byId("filter-document").value,
    text: byId("filter-text").value.trim().toLowerCase(),
    from: byId("filter-from").value,
    until: byId("filter-until").value,
  };
}

function resetMemoryFilter() {
  byId("filter-document").value = "";
  byId("filter-text").value = "";
  byId("filter-from").value = "";
  byId("filter-until").value = "";
}

/** The document filter's choices: this namespace's documents (the first hundred). */
function fillDocumentFilter() {
  const select = byId("filter-document");
  const chosen = select.value;
  replace(
    select,
    h("option", { value: "", text: "All documents" }),
    ...[...state.titles].map(([id, title]) => h("option", { value: id, text: title })),
  );
  select.value = [...state.titles.keys()].includes(chosen) ? chosen : "";
}

/** Whether a memory passes the text and date filters (the day it was remembered, UTC). */
function passes(m, f) {
  if (f.text && !m.memory.toLowerCase().includes(f.text)) return false;
  const day = (m.system?.createdAt ?? "").slice(0, 10);
  if (f.from && day < f.from) return false;
  if (f.until && day > f.until) return false;
  return true;
}

async function loadMemories(reset) {
  if (reset) state.memoriesPage = 1;
  const forgotten = byId("show-forgotten").checked;
  const f = memoryFilter();
  // Folded on a phone, the summary still says that a filter narrows the list.
  byId("filter-state").textContent = f.documentId || f.text || f.from || f.until || forgotten ? " (on)" : "";
  const stale = beginLoad("memories");
  await attempt(async () => {
    await documentTitles();
    if (stale()) return;
    fillDocumentFilter();
    const list = byId("memory-list");
    const suffix = forgotten ? " (forgotten and superseded ones included)" : "";
    if (f.text || f.from || f.until) {
      // The API lists by document and metadata only: text and dates are matched here, over the
      // newest memories, page by page, until the dates are passed or FILTER_SCAN_MAX were read.
      const found = [];
      let scanned = 0;
      let total = 0;
      for (let page = 1; scanned < FILTER_SCAN_MAX; page++) {
        const { memories, pagination } = await api.listMemories(state.namespace, page, forgotten, {
          documentId: f.documentId,
          limit: FILTER_SCAN_PAGE,
        });
        if (stale()) return;
        total = pagination.totalItems ?? 0;
        scanned += memories.length;
        found.push(...memories.filter((m) => passes(m, f)));
        const oldest = memories.at(-1)?.system?.createdAt?.slice(0, 10);
        if (page >= pagination.totalPages || memories.length === 0 || (f.from && oldest && oldest < f.from))
          break;
      }
      replace(list, ...found.map(memoryItem));
      replace(byId("memories-empty"));
      byId("memory-count").textContent =
        `${plural(found.length, "memory matches", "memories match")} the filter${suffix}` +
        (scanned < total ? ` (the newest ${scanned} of ${total} were looked through).` : ".");
      byId("more-memories").hidden = true;
      return;
    }
    const { memories, pagination } = await api.listMemories(state.namespace, state.memoriesPage, forgotten, {
      documentId: f.documentId,
    });
    if (stale()) return;
    if (reset) replace(list);
    for (const m of memories) list.append(memoryItem(m));
    const total = pagination.totalItems ?? memories.length;
    byId("memory-count").textContent =
      total === 0
        ? f.documentId
          ? "No memories from this document."
          : "No memories in this namespace yet."
        : `${plural(total, "memory", "memories")}${f.documentId ? " from this document" : ""}${suffix}, newest first.`;
    replace(
      byId("memories-empty"),
      total === 0 && !f.documentId && !forgotten
        ? nextSteps("Memories come from your agents and from your notes:")
        : null,
    );
    byId("more-memories").hidden = pagination.currentPage >= pagination.totalPages;
  });
}

function memoryFlags(m) {
  return [
    m.version ? badge(`v${m.version}`) : null,
    m.isForgotten
      ? badge("forgotten", "bad")
      : m.isLatest === false
        ? badge("superseded", "warn")
        : badge("latest", "ok"),
    m.isStatic === true ? badge("static") : m.isStatic === false ? badge("dynamic") : null,
    m.isInference ? badge("inferred") : null,
  ];
}

function sourceLine(m, doc) {
  const docId = m.documentId ?? doc?.id;
  const title = doc?.title || (docId ? state.titles.get(docId) : undefined) || docId;
  return [
    h("span", { text: `Remembered ${when(m.system?.createdAt)}` }),
    docId
      ? h(
          "span",
          {},
          " · from ",
          h("button", {
            type: "button",
            class: "link",
            text: title,
            title: `Document ${docId}`,
            onclick: () => openDocument(docId),
          }),
          doc?.date ? ` (dated ${when(doc.date)})` : "",
        )
      : null,
    m.forgetReason ? h("span", { text: ` · ${m.forgetReason}` }) : null,
    m.forgetAfter ? h("span", { text: ` · forget after ${when(m.forgetAfter)}` }) : null,
  ];
}

function memoryItem(m) {
  const history = h("div", { class: "history", hidden: true, id: `history-${m.id}` });
  const historyButton = h("button", {
    type: "button",
    text: "Details and history",
    "aria-expanded": "false",
    "aria-controls": history.id,
    onclick: () => toggleHistory(m, historyButton, history),
  });
  const actions = h("div", { class: "actions" }, historyButton);
  const editor = editForm(m);
  if (!m.isForgotten && m.isLatest !== false) {
    actions.append(
      h("button", {
        type: "button",
        text: "Edit",
        "aria-expanded": "false",
        "aria-controls": editor.id,
        onclick: (e) => toggleEditor(e.currentTarget, editor),
      }),
    );
  }
  if (!m.isForgotten) {
    actions.append(
      h("button", { type: "button", class: "danger", text: "Forget", onclick: () => forgetOne(m) }),
    );
  } else {
    actions.append(h("button", { type: "button", text: "Restore", onclick: () => restoreOne(m) }));
  }
  return h(
    "li",
    {
      class: `card memory${m.isForgotten ? " forgotten" : ""}${m.isLatest === false ? " superseded" : ""}`,
      "data-id": m.id,
    },
    h("p", { class: "memory-text", text: m.memory }),
    h("p", { class: "flags" }, ...memoryFlags(m)),
    h("p", { class: "meta" }, ...sourceLine(m)),
    actions,
    editor,
    history,
  );
}

/** A correction in place: the text becomes a new version, the old one stays as its parent. */
function editForm(m) {
  const field = h("textarea", { id: `edit-text-${m.id}`, rows: "3", required: true, value: m.memory });
  const form = h(
    "form",
    { class: "edit-form", hidden: true, id: `edit-${m.id}`, "aria-label": "Edit memory" },
    h("label", { for: field.id, text: "Corrected text" }),
    h("p", {
      class: "muted",
      text:
        "Saved as a new version of this memory; the current text stays in its history, and the sentence " +
        "it came from is no longer recalled from its document's passages.",
    }),
    field,
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", text: "Save new version" }),
      h("button", {
        type: "button",
        text: "Cancel",
        onclick: () => {
          field.value = m.memory;
          form.hidden = true;
          form.parentElement
            ?.querySelector(`[aria-controls="${form.id}"]`)
            ?.setAttribute("aria-expanded", "false");
        },
      }),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void saveEdit(m, field.value.trim());
  });
  return form;
}

function toggleEditor(button, form) {
  const open = button.getAttribute("aria-expanded") === "true";
  button.setAttribute("aria-expanded", String(!open));
  form.hidden = open;
  if (!open) form.querySelector("textarea")?.focus();
}

async function saveEdit(m, text) {
  if (!text || text === m.memory) return;
  await attempt(async () => {
    const updated = await api.updateMemory(state.namespace, m.id, text);
    say(`Saved as version ${updated.version}: ${updated.memory}`);
    await refreshCounts();
    await loadMemories(true);
  });
}

async function restoreOne(m) {
  const ok = await confirmAction({
    title: "Restore this memory?",
    text:
      "The API has no way to un-forget a memory. Restoring writes its text again as a new memory " +
      "(with its kind and tags), which agents recall from now on. The forgotten one stays in the " +
      "list of forgotten memories, and the sentence it came from stays out of its document's passages in search.",
    items: [m.memory],
    ok: "Restore as a new memory",
    destructive: false,
  });
  if (!ok) return;
  await attempt(async () => {
    await api.restoreMemory(state.namespace, m);
    say(`Restored as a new memory: ${m.memory}`);
    await refreshCounts();
    await loadMemories(true);
  });
}

async function toggleHistory(m, button, box) {
  const open = button.getAttribute("aria-expanded") === "true";
  button.setAttribute("aria-expanded", String(!open));
  box.hidden = open;
  if (open) return;
  replace(box, h("p", { class: "muted", text: "Loading…" }));
  await attempt(async () => {
    const full = await api.memory(state.namespace, m.id);
    const related = full.included?.related ?? { parents: [], children: [], siblings: [] };
    const doc = full.included?.document;
    const versionList = (label, items, empty) =>
      h(
        "section",
        { "aria-label": label },
        h("h4", { text: label }),
        items.length === 0
          ? h("p", { class: "muted", text: empty })
          : h(
              "ol",
              { class: "versions" },
              ...items.map((r) =>
                h(
                  "li",
                  {},
                  h("span", { class: "memory-text", text: r.memory }),
                  " ",
                  r.version ? badge(`v${r.version}`) : null,
                  r.system?.createdAt
                    ? h("span", { class: "muted", text: ` ${when(r.system.createdAt)}` })
                    : null,
                ),
              ),
            ),
      );
    replace(
      box,
      await memoryDetails(full, doc),
      h("h3", { text: `Version history of v${full.version ?? 1}` }),
      h("p", { class: "meta" }, ...sourceLine(full, doc)),
      versionList("Earlier versions (parents)", related.parents, "No earlier version: this is the first."),
      versionList("Newer versions (children)", related.children, "No newer version: this is the latest."),
      related.siblings?.length
        ? versionList("Related memories (extends, derives)", related.siblings, "")
        : null,
    );
  });
}

/** The words of a text worth comparing (lowercase, three letters or more). */
const wordsOf = (text) => new Set((text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter(Boolean));

/**
 * The passage of the document a memory most likely came from: the chunk sharing most of its
 * words (the API does not say where in its document a memory was found).
 */
function likelyPassage(memory, chunks) {
  const words = wordsOf(memory);
  let best = null;
  let bestShared = 1;
  for (const c of chunks) {
    const own = wordsOf(c.content);
    const shared = [...words].filter((w) => own.has(w)).length;
    if (shared > bestShared) {
      best = c;
      bestShared = shared;
    }
  }
  return best;
}

/** A memory's metadata and source: its document, and the passage it came from. */
async function memoryDetails(m, doc) {
  const rows = [
    ["Id", m.id],
    ["Version", `v${m.version ?? 1}${m.isLatest === false ? " (superseded)" : ""}`],
    ["Kind", m.isStatic ? "static (a lasting fact)" : "dynamic (an event or recent state)"],
    ["Remembered", when(m.system?.createdAt)],
    ["Updated", when(m.system?.updatedAt)],
    m.forgetAfter ? ["Forget after", when(m.forgetAfter)] : null,
    m.forgetReason ? ["Forget reason", m.forgetReason] : null,
  ].filter(Boolean);
  const metadata = Object.entries(m.metadata ?? {});
  let source;
  if (!doc) {
    source = h("p", {
      class: "muted",
      text: "No source document: written directly (an edit, a restore or the v4 API).",
    });
  } else {
    const full = await api.document(state.namespace, doc.id).catch(() => null);
    const chunks = full?.chunks ?? [];
    const passage = m.isForgotten ? null : likelyPassage(m.memory, chunks);
    source = h(
      "div",
      {},
      h(
        "p",
        {},
        "Document ",
        h("button", {
          type: "button",
          class: "link",
          text: doc.title || doc.id,
          onclick: () => openDocument(doc.id),
        }),
        ` (${[
          doc.type,
          doc.customId ? `id ${doc.customId}` : `id ${doc.id}`,
          doc.date ? `dated ${when(doc.date)}` : null,
        ]
          .filter(Boolean)
          .join(", ")})`,
      ),
      m.isForgotten
        ? h("p", {
            class: "muted",
            text: "Forgotten: the sentence it came from was taken out of this document's passages, which search no longer matches or shows. The document itself is stored as sent.",
          })
        : passage
          ? h(
              "div",
              {},
              h("p", {
                class: "muted",
                // Its place in the list, not its stored position: positions keep the gap of a
                // passage that forgetting emptied and removed (a conversation turn that said only
                // the forgotten sentence), so position + 1 could exceed the count ("16 of 15").
                text: `Passage ${chunks.indexOf(passage) + 1} of ${chunks.length}, the one sharing most of its words:`,
              }),
              h("p", { class: "passage", text: passage.content }),
            )
          : h("p", { class: "muted", text: "No passage of the document shares its words." }),
    );
  }
  return h(
    "section",
    { class: "details", "aria-label": "Details" },
    h("h3", { text: "Details" }),
    h("dl", { class: "facts" }, ...rows.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })])),
    h("h4", { text: "Metadata" }),
    metadata.length === 0
      ? h("p", { class: "muted", text: "No metadata." })
      : h(
          "dl",
          { class: "facts" },
          ...metadata.flatMap(([k, v]) => [
            h("dt", { text: k }),
            h("dd", { text: typeof v === "string" ? v : JSON.stringify(v) }),
          ]),
        ),
    h("h4", { text: "Source" }),
    source,
  );
}

async function forgetOne(m) {
  const ok = await confirmAction({
    title: "Forget this memory?",
    text:
      "Search, the profile and agents will no longer recall it, nor the earlier versions it replaced, and the " +
      "sentence it came from is taken out of its document's passages in search, as are theirs (the rest of the " +
      "passage stays findable). The document itself stays stored: delete it under Documents. The memory stays " +
      "listed under forgotten memories.",
    items: [m.memory],
    ok: "Forget memory",
  });
  if (!ok) return;
  await attempt(async () => {
    const res = await api.forget(state.namespace, [m.id]);
    if (res.errors?.length) throw new Error(res.errors.map((e) => `${e.id}: ${e.error}`).join("; "));
    say(`Forgot: ${m.memory}`);
    await refreshCounts();
    await reloadCurrent();
  });
}

async function forgetByMeaning(event) {
  event.preventDefault();
  const query = byId("forget-query").value.trim();
  if (!query) return;
  const box = byId("forget-meaning-result");
  await attempt(async () => {
    const preview = await api.forgetByMeaning(state.namespace, query, true);
    if (preview.matches.length === 0) {
      replace(box, h("p", { class: "muted", text: `Nothing matches “${query}”.` }));
      return;
    }
    replace(
      box,
      h(
        "div",
        { class: "card preview", role: "group", "aria-label": "Dry run matches" },
        h("p", {
          text: `Dry run: ${plural(preview.matches.length, "memory matches", "memories match")}. Nothing is forgotten yet.`,
        }),
        h("ul", {}, ...preview.matches.map((m) => h("li", { text: m.memory }))),
        h("button", {
          type: "button",
          class: "danger",
          text: `Forget ${plural(preview.matches.length, "memory", "memories")}`,
          onclick: () => confirmMatches(preview.matches),
        }),
        h("button", { type: "button", text: "Cancel", onclick: () => replace(box) }),
      ),
    );
  });
}

async function confirmMatches(matches) {
  const ok = await confirmAction({
    title: `Forget ${plural(matches.length, "memory", "memories")}?`,
    text: "These are the dry run's matches; exactly these are forgotten.",
    items: matches.map((m) => m.memory),
    ok: "Forget them",
  });
  if (!ok) return;
  await attempt(async () => {
    // The reviewed ids, not the query again: what is forgotten is what the user saw.
    const res = await api.forget(
      state.namespace,
      matches.map((m) => m.id),
    );
    say(`Forgot ${plural(res.count, "memory", "memories")}.`);
    replace(byId("forget-meaning-result"));
    await refreshCounts();
    await loadMemories(true);
  });
}

// ---------- search ----------

async function search(event) {
  event.preventDefault();
  const query = byId("search").value.trim();
  if (!query) return;
  const body = {
    query,
    searchMode: byId("search-mode").value,
    threshold: Number(byId("threshold").value),
    limit: Number(byId("search-limit").value),
    include: { related: true, documents: true },
  };
  const stale = beginLoad("search");
  await attempt(async () => {
    await documentTitles();
    const { results, searchTime } = await api.search(state.namespace, body);
    if (stale()) return;
    byId("search-info").textContent =
      `${plural(results.length, "result", "results")} for “${query}” (${body.searchMode}, threshold ${body.threshold}) in ${Math.round(searchTime)} ms.`;
    replace(byId("search-results"), ...results.map(hitItem));
    replace(
      byId("search-empty"),
      results.length > 0
        ? null
        : currentIsEmpty()
          ? nextSteps("Nothing to search here yet. Memories come from your agents and from your notes:")
          : h("p", {
              class: "muted",
              text: "Nothing reached the threshold: lower it (0 shows every match), or search in another mode.",
            }),
    );
  });
}

function hitItem(hit) {
  const isMemory = typeof hit.memory === "string";
  const similarity = Number(hit.similarity);
  const related = hit.included?.related;
  const doc = hit.included?.document;
  const li = h(
    "li",
    { class: `card hit ${isMemory ? "memory" : "chunk"}`, "data-id": hit.id },
    h(
      "p",
      { class: "similarity" },
      h("meter", { min: "0", max: "1", value: String(similarity), "aria-label": "Similarity" }),
      h("span", { class: "score", text: `similarity ${similarity.toFixed(2)}` }),
      badge(isMemory ? "memory" : "chunk"),
      isMemory && hit.isLatest === false ? badge("superseded", "warn") : null,
    ),
    h("p", { class: isMemory ? "memory-text" : "chunk-text", text: isMemory ? hit.memory : hit.chunk }),
    h("p", { class: "meta" }, ...sourceLine(hit, doc)),
  );
  if (related && (related.parents.length || related.children.length)) {
    li.append(
      h(
        "div",
        { class: "history" },
        related.parents.length
          ? h("p", { class: "muted", text: `Earlier: ${related.parents.map((r) => r.memory).join(" → ")}` })
          : null,
        related.children.length
          ? h("p", { class: "muted", text: `Newer: ${related.children.map((r) => r.memory).join(" → ")}` })
          : null,
      ),
    );
  }
  if (isMemory) {
    li.append(
      h(
        "div",
        { class: "actions" },
        h("button", {
          type: "button",
          class: "danger",
          text: "Forget",
          onclick: () => forgetOne({ id: hit.id, memory: hit.memory }),
        }),
      ),
    );
  }
  return li;
}

// ---------- profile ----------

async function loadProfile() {
  const box = byId("profile");
  await attempt(async () => {
    const { profile } = await api.profile(state.namespace);
    const factList = (label, items) =>
      h(
        "section",
        { class: "card", "aria-label": label },
        h("h3", { text: `${label} (${items.length})` }),
        items.length === 0
          ? h("p", { class: "muted", text: "Nothing yet." })
          : h("ul", { class: "facts-list" }, ...items.map((f) => h("li", { text: f.memory }))),
      );
    const buckets = Object.entries(profile.buckets ?? {});
    const empty = [profile.static, profile.dynamic, ...buckets.map(([, items]) => items)].every(
      (items) => items.length === 0,
    );
    replace(
      box,
      h("p", { class: "muted", text: "What an agent is given about this namespace before every task." }),
      empty
        ? nextSteps(
            "No profile yet: it is drawn from this namespace's memories, which come from your agents and from your notes:",
          )
        : null,
      h(
        "div",
        { class: "grid" },
        factList("Static: lasting facts", profile.static),
        factList("Dynamic: recent events and states", profile.dynamic),
      ),
      h("h3", { text: "Buckets" }),
      buckets.length === 0
        ? h("p", { class: "muted", text: "No buckets." })
        : h("div", { class: "grid" }, ...buckets.map(([name, items]) => factList(name, items))),
    );
  });
}

// ---------- documents ----------

function documentState(d) {
  const s = d.system;
  return [
    badge(s.status, s.status === "done" ? "ok" : s.status === "failed" ? "bad" : "warn"),
    badge(
      s.dreamingStatus === "dreaming" ? "dreaming" : "memories done",
      s.dreamingStatus === "dreaming" ? "warn" : "ok",
    ),
  ];
}

async function loadDocuments(reset) {
  if (reset) state.documentsPage = 1;
  clearTimeout(state.pollTimer);
  const stale = beginLoad("documents");
  await attempt(async () => {
    const { documents, pagination } = await api.listDocuments(state.namespace, state.documentsPage);
    if (stale()) return;
    const list = byId("document-list");
    if (reset) replace(list);
    for (const d of documents) {
      state.titles.set(d.id, d.title || d.id);
      list.append(documentItem(d));
    }
    const total = pagination.totalItems ?? documents.length;
    byId("document-count").textContent =
      total === 0
        ? "No documents in this namespace yet."
        : `${plural(total, "document", "documents")}, newest first.`;
    replace(
      byId("documents-empty"),
      total === 0 ? nextSteps("Documents come from your agents and from your notes:") : null,
    );
    byId("more-documents").hidden = pagination.currentPage >= pagination.totalPages;
    const busy =
      documents.some((d) => d.system.status !== "done" && d.system.status !== "failed") ||
      documents.some((d) => d.system.dreamingStatus === "dreaming");
    if (busy && state.tab === "documents" && reset) {
      state.pollTimer = setTimeout(() => void loadDocuments(true), POLL_MS);
    }
  });
}

function documentItem(d) {
  const details = h("div", { class: "details", hidden: true, id: `doc-${d.id}` });
  const openButton = h("button", {
    type: "button",
    text: "Open",
    "aria-expanded": "false",
    "aria-controls": details.id,
    onclick: () => toggleDocument(d, openButton, details),
  });
  return h(
    "li",
    { class: "card document", "data-id": d.id },
    h("h3", { class: "doc-title", text: d.title || d.id }),
    h("p", { class: "flags" }, ...documentState(d)),
    h(
      "p",
      { class: "meta" },
      [
        d.type,
        d.source ? `source ${d.source}` : null,
        d.date ? `dated ${when(d.date)}` : null,
        `added ${when(d.system.createdAt)}`,
      ]
        .filter(Boolean)
        .join(" · "),
    ),
    d.error ? h("p", { class: "error-text", text: `Failed: ${d.error}` }) : null,
    h(
      "div",
      { class: "actions" },
      openButton,
      h("button", { type: "button", class: "danger", text: "Delete", onclick: () => deleteDocument(d) }),
    ),
    details,
  );
}

async function toggleDocument(d, button, box) {
  const open = button.getAttribute("aria-expanded") === "true";
  button.setAttribute("aria-expanded", String(!open));
  button.textContent = open ? "Open" : "Close";
  box.hidden = open;
  if (open) return;
  replace(box, h("p", { class: "muted", text: "Loading…" }));
  await attempt(async () => {
    const full = await api.document(state.namespace, d.id);
    const chunks = full.chunks ?? [];
    const memories = full.memories ?? [];
    replace(
      box,
      full.url ? h("p", { class: "meta", text: `URL: ${full.url}` }) : null,
      h("h4", { text: "Content" }),
      h("pre", { class: "content", text: full.content ?? "" }),
      h("h4", { text: `Chunks (${chunks.length})` }),
      chunks.length === 0
        ? h("p", { class: "muted", text: "No chunks yet." })
        : h("ol", { class: "chunks" }, ...chunks.map((c) => h("li", { text: c.content }))),
      h("h4", { text: `Memories drawn from it (${memories.length})` }),
      memories.length === 0
        ? h("p", { class: "muted", text: "No memories from this document." })
        : h(
            "ul",
            { class: "facts-list" },
            ...memories.map((m) => h("li", {}, h("span", { text: m.memory }), " ", ...memoryFlags(m))),
          ),
    );
  });
}

async function openDocument(id) {
  await showTab("documents");
  const item = [...byId("document-list").children].find((li) => li.dataset.id === id);
  if (!item) {
    say(`Document ${id} is not on the first page of documents.`);
    return;
  }
  const button = item.querySelector("button[aria-expanded]");
  if (button?.getAttribute("aria-expanded") === "false") button.click();
  item.scrollIntoView({ block: "start" });
  button?.focus();
}

async function deleteDocument(d) {
  const ok = await confirmAction({
    title: "Delete this document?",
    text: "Its chunks go with it; memories drawn only from it are forgotten.",
    items: [d.title || d.id],
    ok: "Delete document",
  });
  if (!ok) return;
  await attempt(async () => {
    const res = await api.deleteDocument(state.namespace, d.id);
    if (res.errors?.length) throw new Error(res.errors.map((e) => `${e.id}: ${e.error}`).join("; "));
    say(`Deleted document ${d.title || d.id}.`);
    state.titles.delete(d.id);
    await refreshCounts();
    await loadDocuments(true);
  });
}

async function addNote(event) {
  event.preventDefault();
  const content = byId("note").value.trim();
  if (!content) return;
  await attempt(async () => {
    const res = await api.addNote(state.namespace, content);
    byId("note").value = "";
    say(`Note added (document ${res.id}, ${res.status}). Memories appear when processing is done.`);
    await refreshCounts();
    await loadDocuments(true);
  });
}

// ---------- connectors ----------

async function loadConnectors() {
  const list = byId("connector-list");
  await attempt(async () => {
    const { connectors } = await api.connectors(state.namespace);
    if (connectors.length === 0) {
      replace(
        list,
        h(
          "li",
          { class: "muted" },
          "No connectors in this namespace. Connect a source with the MCP tool connect_source or POST /ns/{namespace}/connectors.",
        ),
      );
      return;
    }
    replace(list, ...connectors.map(connectorItem));
  });
}

function connectorItem(c) {
  const run = c.latestRun;
  const runText = run
    ? `Last sync: ${run.system.status}${run.system.finishedAt ? `, finished ${when(run.system.finishedAt)}` : run.system.startedAt ? `, started ${when(run.system.startedAt)}` : ""}`
    : "Never synced.";
  const counts = run?.counts
    ? Object.entries(run.counts)
        .filter(([, n]) => n)
        .map(([k, n]) => `${n} ${k}`)
        .join(", ")
    : "";
  return h(
    "li",
    { class: "card connector", "data-id": c.id },
    h("h3", { text: c.provider }),
    h(
      "p",
      { class: "meta" },
      [
        c.account,
        c.config?.startUrl,
        c.documentLimit ? `up to ${c.documentLimit} documents` : null,
        `id ${c.id}`,
      ]
        .filter(Boolean)
        .join(" · "),
    ),
    h("p", { text: runText }, counts ? h("span", { class: "muted", text: ` (${counts})` }) : null),
    run?.error ? h("p", { class: "error-text", text: run.error }) : null,
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "button",
        text: "Sync now",
        onclick: () =>
          attempt(async () => {
            const res = await api.syncConnector(state.namespace, c.id);
            say(`Sync of ${c.provider} started (run ${res.runId}).`);
            await loadConnectors();
          }),
      }),
    ),
  );
}

// ---------- settings ----------

async function loadSettings() {
  // Nothing typed may be overwritten by the stored context arriving late.
  const fields = byId("context-form").querySelectorAll("textarea, button");
  for (const f of fields) f.disabled = true;
  await attempt(async () => {
    const record = await api.namespace(state.namespace).catch((err) => {
      // A namespace with nothing in it yet has no record; its context can still be set.
      if (err instanceof ApiError && err.status === 404)
        return { supportingContext: null, documentCount: 0, memoryCount: 0 };
      throw err;
    });
    byId("supporting-context").value = record.supportingContext ?? "";
    replace(
      byId("namespace-facts"),
      h("dt", { text: "Namespace" }),
      h("dd", { text: state.namespace }),
      h("dt", { text: "Documents" }),
      h("dd", { text: String(record.documentCount) }),
      h("dt", { text: "Memories" }),
      h("dd", { text: String(record.memoryCount) }),
      record.system ? h("dt", { text: "Created" }) : null,
      record.system ? h("dd", { text: when(record.system.createdAt) }) : null,
    );
  });
  for (const f of fields) f.disabled = false;
}

async function saveContext(value) {
  await attempt(async () => {
    await api.setSupportingContext(state.namespace, value);
    say(value === null ? "Supporting context cleared." : "Supporting context saved.");
    await loadSettings();
  });
}

// ---------- wiring ----------

async function reloadCurrent() {
  await showTab(state.tab);
  if (state.tab === "search" && byId("search").value.trim()) byId("search-form").requestSubmit();
}

function wire() {
  // Wide screens show the filter and forget-by-meaning forms open; a phone folds them, so the first
  // memory and its buttons are on the first screen.
  const wide = matchMedia("(min-width: 801px)").matches;
  for (const id of ["filter-box", "forget-box"]) byId(id).open = wide;
  byId("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = byId("api-key").value.trim();
    if (!key) return;
    setKey(key);
    await connect();
  });
  byId("sign-out").addEventListener("click", () => signOut());
  byId("namespace").addEventListener("change", (e) => {
    if (e.target.value !== state.namespace) void openNamespace(e.target.value);
  });
  for (const t of TABS) {
    const button = byId(`tab-${t}`);
    button.addEventListener("click", () => showTab(t));
    button.addEventListener("keydown", tabKeys);
  }
  byId("show-forgotten").addEventListener("change", () => loadMemories(true));
  byId("refresh-memories").addEventListener("click", async () => {
    await refreshCounts();
    await loadMemories(true);
  });
  byId("more-memories").addEventListener("click", () => {
    state.memoriesPage += 1;
    void loadMemories(false);
  });
  byId("forget-meaning-form").addEventListener("submit", forgetByMeaning);
  byId("memory-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    void loadMemories(true);
  });
  byId("filter-document").addEventListener("change", () => loadMemories(true));
  byId("clear-filter").addEventListener("click", () => {
    resetMemoryFilter();
    void loadMemories(true);
  });
  byId("search-form").addEventListener("submit", search);
  byId("note-form").addEventListener("submit", addNote);
  byId("refresh-documents").addEventListener("click", () => loadDocuments(true));
  byId("more-documents").addEventListener("click", () => {
    state.documentsPage += 1;
    void loadDocuments(false);
  });
  byId("context-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = byId("supporting-context").value.trim();
    void saveContext(value === "" ? null : value);
  });
  byId("clear-context").addEventListener("click", () => saveContext(null));
}

wire();
void start();
