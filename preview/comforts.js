// Everyday comforts of the page: the colour theme, the share link, copying
// the response, resetting to the example, and the sample files of examples/.

import { $, askToReplace, fmt, notice } from "./page.js";
import { STORE_KEY } from "./doc.js";
import { sideOf } from "./opened.js";
import { requestsOfFile } from "./files.js";
import { SHARE_LIMIT, copyText, shareLink } from "./share.js";

const THEME_KEY = "polyloop-preview:theme";
const THEMES = ["auto", "light", "dark"];

/** Whether the page is dark now (its theme, or the system's for "auto"). */
export function isDark() {
  const t = document.documentElement.dataset.theme;
  return t === "dark" || (t === "auto" && matchMedia("(prefers-color-scheme: dark)").matches);
}

/**
 * The theme button (auto, light, dark; kept in localStorage); applies the stored theme now.
 * @param {import("@polyloop/preview").PromptView} view
 * @param {import("./doc.js").EditorDoc} doc
 */
export function themes(view, doc) {
  function apply(t) {
    const dark = t === "dark" || (t === "auto" && matchMedia("(prefers-color-scheme: dark)").matches);
    document.documentElement.dataset.theme = t;
    if (t === "auto") view.removeAttribute("theme");
    else view.setAttribute("theme", t);
    doc.setDark(dark);
    $("theme").textContent = `Theme: ${t}`;
    $("theme").title = `Colour theme: ${t === "auto" ? "auto follows the system" : t}; click to change`;
  }
  $("theme").addEventListener("click", () => {
    const t = THEMES[(THEMES.indexOf(document.documentElement.dataset.theme ?? "auto") + 1) % THEMES.length];
    localStorage.setItem(THEME_KEY, t);
    apply(t);
  });
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => apply(document.documentElement.dataset.theme ?? "auto"));
  apply(localStorage.getItem(THEME_KEY) ?? "auto");
}

/**
 * The share, copy and reset buttons.
 * @param {import("@polyloop/preview").PromptView} view
 * @param {import("./doc.js").EditorDoc} doc
 * @param {import("./opened.js").OpenedFile} opened
 * @param {() => string} example the example request
 */
export function shareCopyReset(view, doc, opened, example) {
  $("share").addEventListener("click", async () => {
    if (doc.fromBytes) {
      notice(
        "No share link for this request: the view judges a file's bytes, and a link holds the editor's text (which differs). Share the file, or edit (“Convert to text” for a file that is not UTF-8) first.",
        "bad",
      );
      return;
    }
    const { url, size } = await shareLink(doc.text());
    if (!url) {
      notice(
        `Too large for a share link: ${fmt.format(size)} characters compressed, the limit is ${fmt.format(SHARE_LIMIT)}. Share the file instead.`,
        "bad",
      );
      return;
    }
    await copyText(url);
    notice(`Share link copied (${fmt.format(url.length)} characters; the request travels in the link's fragment, never to a server).`);
  });

  $("copy").addEventListener("click", async () => {
    const text = await view.responseJSON();
    if (text === null) return;
    await copyText(text);
    notice("Response JSON copied.");
  });

  $("reset").addEventListener("click", () => {
    if (doc.text() === example()) return;
    const d = /** @type {HTMLDialogElement} */ ($("confirm-reset"));
    d.returnValue = "";
    d.showModal();
  });
  $("confirm-reset").addEventListener("close", () => {
    const d = /** @type {HTMLDialogElement} */ ($("confirm-reset"));
    if (d.returnValue !== "discard") return;
    localStorage.removeItem(STORE_KEY);
    opened.leave();
    doc.set(example(), { fresh: true });
    notice("Reset to the example request.");
  });
}

/** A sample file of the repository's examples/ (served beside the page) as a File-like. @param {string} name */
async function exampleFile(name) {
  const r = await fetch(`./examples/${name}`, { cache: "no-cache" });
  if (!r.ok) throw new Error(`examples/${name}: HTTP ${r.status} (run the page with \`make preview\`, which serves them)`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return { name, size: bytes.length, arrayBuffer: async () => bytes.buffer };
}

/**
 * The Examples menu; returns openExample(value), which opens example `value`
 * (asking first when the editor holds edits).
 * @param {import("./doc.js").EditorDoc} doc
 * @param {import("./opened.js").OpenedFile} opened
 * @param {import("./compare.js").ComparePanel} compare
 */
export function examplesMenu(doc, opened, compare) {
  /** @param {string} value */
  async function openExample(value) {
    if (!value) return;
    if (doc.hasEdits() && !(await askToReplace())) return notice("Kept your edits; the example was not opened.");
    try {
      if (value === "compare") {
        const [a, b] = await Promise.all(["compare-a.json", "compare-b.json"].map(exampleFile));
        await opened.open(a);
        compare.set("a", /** @type {any} */ (sideOf(requestsOfFile(new Uint8Array(await a.arrayBuffer()), a.name)[0], a.name)));
        compare.set("b", /** @type {any} */ (sideOf(requestsOfFile(new Uint8Array(await b.arrayBuffer()), b.name)[0], b.name)));
        notice("Opened compare-a.json; the comparison below is compare-a.json (A) against compare-b.json (B).");
      } else
        await opened.open(
          await exampleFile(value),
          value.endsWith(".msgpack") ? { lines: true } : value === "trajectories.jsonl" ? { split: "lines" } : {},
        );
    } catch (err) {
      notice(`Cannot open the example: ${/** @type {Error} */ (err).message}`, "bad");
    }
  }
  $("examples").addEventListener("change", (ev) => {
    const sel = /** @type {HTMLSelectElement} */ (ev.target);
    const value = sel.value;
    sel.value = "";
    openExample(value);
  });
  return openExample;
}
