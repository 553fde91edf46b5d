/**
 * The page's only way to build markup: elements with properties, attributes and children, where
 * every string becomes a text node. No HTML is ever parsed from data (memories hold user text).
 */

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [props] `class`, `text`, `on<event>` handlers, `hidden`,
 *   `disabled`, `value`, `checked`; any other key is set as an attribute (aria-*, data-*, for, ...).
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key === "text") el.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "hidden" || key === "disabled" || key === "checked") el[key] = Boolean(value);
    else if (key === "value") el.value = String(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

/** Appends children (arrays are flattened); strings and numbers as text nodes. */
export function append(el, ...children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces every child of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, ...children);
}

/** `2026-11-25T10:52:53.964Z` -> `2026-11-25 10:52 UTC`; plain dates stay as they are. */
export function when(iso) {
  if (typeof iso !== "string" || iso === "") return "";
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) return iso;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** "1 memory", "2 memories". */
export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/** A small labelled badge, for states (done, failed, latest, forgotten). */
export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim(), text });
}

export const byId = (id) => document.getElementById(id);
