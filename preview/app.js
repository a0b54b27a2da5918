// The prompt preview page: a CodeMirror 6 editor holding the request (JSON),
// and <polyloop-prompt-view> (element/), which assembles it in a Web
// Worker with the same module every other host runs and shows the prompt.
// The editor sends the view its changes, not the whole text, so a 16 MB
// request costs the page's thread almost nothing per keystroke; the view
// assembles the newest text once its worker is free (edits typed meanwhile
// are coalesced). The editor (editor.js, CodeMirror) is loaded in parallel
// with the first assembly. Bundled by serve.mjs (esbuild) into app.bundle.js
// and its chunks.
//
// The page's parts: doc.js (the editor's document), opened.js (the open
// file, its list and report), address.js (the address: share link, entry,
// step), steps.js (step slider, find, go to step), comforts.js (theme,
// share, copy, reset, examples), page.js (what they all use); this file
// makes them and starts the page.
//
// Request text only ever reaches the page as text: CodeMirror's document and
// the view's text nodes. Never innerHTML.

import { definePromptView } from "./element/index.js";
import { MAX_STRING_UNITS } from "./element/binding.js";
import { ComparePanel } from "./compare.js";
import { ExportPanel, providerRadios } from "./caching.js";
import { requestsOfFile, tooLargeText } from "./files.js";
import { copyText, inflateBounded, shareLink } from "./share.js";
import { $, dropHash, fmt, notice, askToReplace } from "./page.js";
import { EditorDoc, STORE_KEY, editorText } from "./doc.js";
import { OpenedFile, sideOf } from "./opened.js";
import { Address, fromShareLink } from "./address.js";
import { stepControls } from "./steps.js";
import { examplesMenu, isDark, shareCopyReset, themes } from "./comforts.js";

export { SHARE_LIMIT, SHARE_INFLATE_LIMIT } from "./share.js";
export { editorText } from "./doc.js";

/** Used when examples/react.json was not copied beside the page. */
const FALLBACK_EXAMPLE = JSON.stringify(
  {
    run_messages: [{ role: "system", content: [{ type: "text", text: "You are a ReAct agent. Think, then call one tool." }] }],
    injections: { memory: [{ entry_id: "mem-1", content: "The user prefers metric units." }] },
    goal_messages: [{ role: "user", content: [{ type: "text", text: "How tall is the Eiffel Tower?" }] }],
    steps: [{ raw_output: 'Thought: look it up.\nAction: search("Eiffel Tower height")', observation: "330 m (with antennas)" }],
    observation_template: "Observation: {observation}",
    max_prompt_chars: 400,
  },
  null,
  2,
);

performance.mark("polyloop:app-start");
definePromptView();
const view = /** @type {import("@polyloop/preview").PromptView} */ ($("view"));

// ---- the page's parts --------------------------------------------------------

const doc = new EditorDoc(view, {
  invalidate: () => exporter.invalidate(),
  edited: (d) => opened.markEdited(d),
  fffd: () => opened.picked?.fffd ?? 0,
});
const address = new Address(
  doc,
  () => opened,
  () => steps,
);
const steps = stepControls(view, { letGo: () => address.push() });
const opened = new OpenedFile(view, doc, address);
const { browser, report } = opened;

view.addEventListener("polyloop-result", () => {
  doc.clearMarks();
  /** @type {HTMLButtonElement} */ ($("copy")).disabled = false;
  steps.sync();
});
view.addEventListener("polyloop-error", (/** @type {any} */ ev) => {
  /** @type {HTMLButtonElement} */ ($("copy")).disabled = true;
  steps.sync();
  doc.markError(ev.detail);
});

// ---- prompt caching (caching.js): the provider's request body ------------------

const exporter = new ExportPanel(
  {
    radios: providerRadios(/** @type {HTMLFieldSetElement} */ (document.querySelector("fieldset.provider"))),
    tools: /** @type {HTMLElement} */ (document.querySelector(".prompt-tools")),
    pane: $("export"),
    title: $("export-title"),
    size: $("export-size"),
    copy: /** @type {HTMLButtonElement} */ ($("export-copy")),
    error: $("export-error"),
    json: $("export-json"),
  },
  view,
  {
    copyText: (t) => copyText(t),
    notice,
    locate: ({ from, to }) => view.dispatchEvent(new CustomEvent("polyloop-locate", { detail: { from, to } })),
  },
);

// ---- comparing two requests (compare.js) ----------------------------------------

const compare = new ComparePanel(
  {
    pane: $("compare"),
    toggle: /** @type {HTMLButtonElement} */ ($("compare-toggle")),
    close: /** @type {HTMLButtonElement} */ ($("compare-close")),
    result: $("compare-result"),
    labelA: $("side-a-label"),
    labelB: $("side-b-label"),
    buttons: Object.fromEntries(
      [
        ["pinA", "pin-a"],
        ["liveB", "live-b"],
        ["entry_a", "entry-a"],
        ["entry_b", "entry-b"],
        ["file_a", "file-a"],
        ["file_b", "file-b"],
      ].map(([k, id]) => [k, /** @type {HTMLButtonElement} */ ($(id))]),
    ),
    files: { a: /** @type {HTMLInputElement} */ ($("compare-file-a")), b: /** @type {HTMLInputElement} */ ($("compare-file-b")) },
  },
  view,
  {
    editor: () => {
      const n = fmt.format(doc.editor.state.doc.length);
      if (doc.fromBytes && opened.picked)
        return /** @type {any} */ (sideOf(opened.picked, `pinned copy of the editor (${opened.picked.label})`));
      return { side: { kind: "text", text: doc.text() }, label: `pinned copy of the editor (${n} characters)` };
    },
    picked: () => {
      const r = opened.requests.length > 1 ? opened.requests[opened.browser.selected] : null;
      return r ? /** @type {any} */ (sideOf(r, `${opened.name} · ${r.label}`)) : null;
    },
    file: async (f) => {
      if (f.size > MAX_STRING_UNITS) return `Not compared ${f.name}: ${tooLargeText(f.size)}`;
      const rs = requestsOfFile(new Uint8Array(await f.arrayBuffer()), f.name);
      return sideOf(rs[0], rs.length > 1 ? `${f.name} · ${rs[0].label} (the first of ${fmt.format(rs.length)})` : f.name);
    },
    notice,
  },
);

const openExample = examplesMenu(doc, opened, compare);

let example = FALLBACK_EXAMPLE;
shareCopyReset(view, doc, opened, () => example);
async function loadExample() {
  try {
    const r = await fetch("./react.json", { cache: "no-cache" });
    if (r.ok) return await r.text();
  } catch {
    // fall through
  }
  return FALLBACK_EXAMPLE;
}

// ---- start -------------------------------------------------------------------

/** @type {{asm: any, firstPainted: number | null}} */
const state = { asm: null, firstPainted: null };

async function main() {
  themes(view, doc);
  const shared = await fromShareLink();
  const stored = localStorage.getItem(STORE_KEY);
  example = await loadExample();
  let text = example;
  doc.loaded = editorText(example);
  const savedEdits = stored !== null && stored !== example && stored !== shared;
  if (shared !== null && savedEdits && !(await askToReplace())) {
    text = stored;
    dropHash();
    notice("Kept your saved edits; the share link was not opened (open it again to be asked again).");
  } else if (shared !== null) {
    text = shared;
    doc.loaded = editorText(shared);
    dropHash();
    notice("Loaded the request from the share link.");
  } else if (stored !== null) {
    text = stored;
    if (stored !== example && !location.hash) notice("Restored your edits from the last visit (Reset example discards them).");
  }
  // The request goes to the view's worker first (as the editor will hold
  // it); the editor gets it when its code has loaded.
  text = editorText(text);
  const gen = view.setText(text);
  view.cacheBreakpoints = true;
  await view.whenRendered(gen);
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  state.firstPainted = performance.now();
  performance.mark("polyloop:first-prompt-painted");
  await doc.start(text, isDark());
  // An address naming an entry: no file is open yet, so the page says so and goes there once it is.
  if (/(^#|&)entry=/.test(location.hash)) await address.follow();
  // The lint mark of an error found before the editor existed.
  if (view.error && view.state !== "ok")
    view.dispatchEvent(new CustomEvent("polyloop-error", { detail: { ...view.error, gen: view.generation } }));
  // A page-thread assembler for the console and the tests (the view has its
  // own, in its worker), compiled once the first prompt is on screen.
  const { loadAssembler } = await import("@polyloop/assembly");
  // The worker's compiled module: the page compiles it once.
  state.asm = await loadAssembler({ module: await view.compiledModule() });
}

/** For tests, the benchmark and the console. */
const ready = main().catch((err) => {
  notice(`cannot start: ${err.message}`, "bad");
  document.body.dataset.state = "load-error";
  throw err;
});

Object.assign(window, {
  preview: {
    ready,
    view,
    get editor() {
      return doc.editor;
    },
    shareLink,
    requestsOfFile,
    openFile: (file, opts) => opened.open(file, opts),
    openExample,
    browser,
    compare,
    exporter,
    report,
    inflateBounded,
    /** Replaces the text; resolves when its result is rendered. */
    setText: (text) => view.whenRendered(doc.set(text)),
    /** One edit as a user makes it; resolves when its result is rendered. */
    edit: (from, to, insert) => {
      doc.editor.dispatch({ changes: { from, to, insert } });
      return view.whenRendered(view.generation);
    },
    get state() {
      return view.state;
    },
    get asm() {
      return state.asm;
    },
    get firstPainted() {
      return state.firstPainted;
    },
  },
});
