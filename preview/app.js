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
// Request text only ever reaches the page as text: CodeMirror's document and
// the view's text nodes. Never innerHTML.

import { definePromptView } from "./element/index.js";
import { MAX_STRING_UNITS } from "./element/binding.js";
import { EntryBrowser } from "./browser.js";
import { ComparePanel } from "./compare.js";
import { ExportPanel, RunReport, providerRadios } from "./caching.js";
import { formatJSON, lineColumnAt } from "./jsontext.js";
import { looksLikeLines, requestsOfFile, tooLargeText } from "./files.js";
import { SHARE_LIMIT, copyText, inflateBounded, readShareLink, shareLink } from "./share.js";

export { SHARE_LIMIT, SHARE_INFLATE_LIMIT } from "./share.js";

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

/** localStorage keys; texts larger than STORE_LIMIT are not kept. */
const STORE_KEY = "polyloop-preview:request";
const THEME_KEY = "polyloop-preview:theme";
const STORE_LIMIT = 2_000_000;
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const fmt = new Intl.NumberFormat("en-US");
const plural = (n, one, many = one + "s") => `${fmt.format(n)} ${n === 1 ? one : many}`;

performance.mark("polyloop:app-start");
definePromptView();
const view = /** @type {import("@polyloop/preview").PromptView} */ ($("view"));

function notice(text, cls = "") {
  const n = $("notice");
  n.textContent = text;
  n.className = cls;
}

// ---- editor ----------------------------------------------------------------

/** Set while the page replaces the whole document (so it is sent as text). */
let replacing = false;
/** The document came from bytes the editor cannot hold as they are (msgpack,
 * JSON that is not valid UTF-8, JSON with mixed line breaks): the view
 * judges those bytes, not the editor's text. */
let fromBytes = false;
/** The document is a file the engine judges for its bytes (not UTF-8): the
 * editor takes no edit until "Convert to text" replaces them. */
let locked = false;
/** How the view judges the editor's line breaks: "\r\n" for a CRLF file
 * (byte offsets are the file's), else "\n". */
let lineBreak = /** @type {"\n" | "\r\n"} */ ("\n");
/** What the view judges after the first edit of a document from bytes. */
let afterEdit = "";
/** The text of the document last loaded (the example, a file, an entry, a
 * link): the editor holds edits when its text differs. */
let loaded = "";

/** Whether the editor holds edits of the document last loaded. */
const hasEdits = () => Boolean(editor) && !fromBytes && editor.state.doc.toString() !== loaded;

/**
 * The text as the editor holds it: CodeMirror splits lines at CRLF, CR and
 * LF and joins them with LF, so the view is always sent the editor's text
 * (editor positions apply to it), never a file's raw line endings.
 * @param {string} text
 */
export function editorText(text) {
  return text.includes("\r") ? text.split(/\r\n?|\n/).join("\n") : text;
}

/** The editor module (CodeMirror), loading from the start. */
const cm = import("./editor.js");
/** @type {typeof import("./editor.js") | null} the editor module once loaded */
let cmNow = null;
/** @type {import("@codemirror/view").EditorView} */
let editor;

/** A change to the document, sent to the view's worker as it is made. @param {import("@codemirror/state").Transaction} tr */
function onEditorChange(tr) {
  if (replacing) return;
  if (fromBytes) {
    fromBytes = false;
    view.setText(tr.newDoc.toString(), { lineBreak });
    notice(afterEdit);
  } else {
    /** @type {[number, number, string][]} */
    const changes = [];
    tr.changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => changes.push([fromA, toA, inserted.toString()]));
    view.applyChanges(changes);
  }
  exporter.invalidate();
  markEdited(tr.newDoc);
}

/**
 * The entry of the open file the editor holds, edited or not: an edited one
 * is marked in the list and its report entry stale (the report is of the
 * file's line, not of the editor's text).
 * @param {import("@codemirror/state").Text | null} doc the editor's document, null: none edited
 */
function markEdited(doc) {
  const edited =
    doc !== null && fileRequests.length > 1 && lastPick !== null && (doc.length !== loaded.length || doc.toString() !== loaded);
  const k = edited ? /** @type {{k: number}} */ (lastPick).k : -1;
  if (browser.edited === k) return;
  browser.edited = k;
  browser.refreshRows();
  report.setEdited(k);
}

function onEditorUpdate() {
  if (!replacing) docChanged();
}

/**
 * Replaces the whole document and sends the view the editor's text, or
 * `bytes` (msgpack, or JSON bytes with `json`) until the first edit. The
 * view's worker gets it first (it assembles while the editor takes the
 * text). `fresh`: a new document (a file opened, an entry picked), not
 * compared with the result before and never shown over its prompt.
 * `lock`: the bytes are a file the engine judges for its bytes; the editor
 * takes no edit until converted (convertDoc). `crlf`: the text is a CRLF
 * file's (judged with its CRLF line breaks).
 * @param {string} text
 * @param {{bytes?: Uint8Array | null, json?: boolean, fresh?: boolean, lock?: boolean, crlf?: boolean}} [opts]
 */
function setDoc(text, { bytes = null, json = false, fresh = false, lock = false, crlf = false } = {}) {
  if (!editor) throw new Error("the editor is still loading");
  const doc = editorText(text);
  fromBytes = Boolean(bytes);
  lineBreak = crlf ? "\r\n" : "\n";
  let gen;
  if (!bytes) gen = view.setText(doc, { fresh, lineBreak });
  else if (json) gen = view.setJSONBytes(bytes, { fresh });
  else gen = view.setBytes(bytes, { fresh });
  replacing = true;
  try {
    if (locked) lockEditor(false);
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: doc }, selection: { anchor: 0 }, scrollIntoView: true });
  } finally {
    replacing = false;
  }
  lockEditor(lock && fromBytes);
  loaded = doc;
  docChanged();
  exporter.invalidate();
  return gen;
}

/** Locks the editor (a file judged for its bytes) or unlocks it; the
 * "Convert to text" button shows while locked. */
function lockEditor(on) {
  locked = on;
  $("convert").hidden = !on;
  $("editor").classList.toggle("locked", on);
  cmNow?.setLocked(editor, on);
}

/** "Convert to text": the locked document's text (each invalid byte
 * sequence already U+FFFD) becomes the request; the view judges it from now. */
function convertDoc() {
  if (!locked) return;
  const text = editor.state.doc.toString();
  const replaced = [...text.matchAll(/\uFFFD/g)].length - (pickedRequest?.fffd ?? 0);
  lockEditor(false);
  fromBytes = false;
  view.setText(text, { lineBreak });
  exporter.invalidate();
  notice(
    `Converted to text: ${plural(replaced, "invalid byte sequence")} replaced with U+FFFD (\uFFFD). The view now judges the editor's text, not the file's bytes.`,
  );
  scheduleSave();
}
$("convert").addEventListener("click", convertDoc);

function docChanged() {
  const n = editor.state.doc.length;
  const plain =
    cmNow && n > cmNow.PLAIN_ABOVE
      ? ` · plain text above ${fmt.format(cmNow.PLAIN_ABOVE)} characters (no JSON highlighting, no hidden-character marks)`
      : "";
  $("doc-size").textContent = `${fmt.format(n)} characters · ${fmt.format(editor.state.doc.lines)} lines${plain}`;
  scheduleSave();
}

// ---- results, errors, lint marks --------------------------------------------

/** Whether lint marks were set (the gutter keeps its marker through edits
 * that delete the marked range, so they are cleared by a new set). */
let marked = false;

view.addEventListener("polyloop-result", () => {
  if (marked) cm.then(({ setDiagnostics }) => editor.dispatch(setDiagnostics(editor.state, [])));
  marked = false;
  /** @type {HTMLButtonElement} */ ($("copy")).disabled = false;
  showSyntaxPlace(null);
  syncSteps();
});

view.addEventListener("polyloop-error", (/** @type {any} */ ev) => {
  const e = ev.detail;
  /** @type {HTMLButtonElement} */ ($("copy")).disabled = true;
  syncSteps();
  // The error's positions are in the text of generation e.gen; mark them only
  // if no edit came since (the next result will mark again).
  showSyntaxPlace(null);
  if (e.gen !== view.generation || !e.location || fromBytes || !editor) return;
  const len = editor.state.doc.length;
  let from = Math.min(e.location.from, len);
  let to = Math.max(from, Math.min(e.location.to, len));
  let what = e.syntax ? "JSON syntax error" : `${e.code}${e.path ? ` at ${e.path}` : ""}`;
  const place = e.syntax ? lineColumnAt(editor.state.doc.toString(), from) : null;
  if (place) {
    from = place.index;
    to = Math.min(len, from + 1);
    what = `JSON syntax error at line ${place.line}, column ${place.column}`;
    showSyntaxPlace(place);
  }
  marked = true;
  cm.then(({ setDiagnostics }) =>
    editor.dispatch(
      setDiagnostics(editor.state, [{ from, to, severity: "error", message: `${what}: ${e.message}`, source: "assembly module" }]),
    ),
  );
});

view.addEventListener("polyloop-locate", (/** @type {any} */ ev) => {
  const { from, to } = ev.detail;
  const len = editor.state.doc.length;
  editor.dispatch({ selection: { anchor: Math.min(from, len), head: Math.min(to, len) }, scrollIntoView: true });
  editor.focus();
});

/** Shows (or hides, for null) the syntax error's line and column beside
 * the editor's title; a click puts the cursor there. */
function showSyntaxPlace(place) {
  const b = /** @type {HTMLButtonElement} */ ($("error-at"));
  /** @type {HTMLButtonElement} */ ($("format")).disabled = place !== null;
  b.hidden = place === null;
  if (!place) return;
  b.textContent = `JSON syntax error: line ${fmt.format(place.line)}, column ${fmt.format(place.column)}`;
  b.dataset.line = String(place.line);
  b.dataset.column = String(place.column);
  b.dataset.index = String(place.index);
}

$("error-at").addEventListener("click", () => {
  const at = Math.min(Number($("error-at").dataset.index), editor.state.doc.length);
  editor.dispatch({ selection: { anchor: at, head: Math.min(editor.state.doc.length, at + 1) }, scrollIntoView: true });
  editor.focus();
});

/** Pretty-prints the request in the editor (one undoable edit): only
 * whitespace outside strings changes, every value is kept as written. */
function formatDoc() {
  const text = editor.state.doc.toString();
  const pretty = formatJSON(text);
  if (pretty === text) return;
  editor.dispatch({ changes: { from: 0, to: text.length, insert: pretty }, selection: { anchor: 0 }, scrollIntoView: true });
  notice("Formatted: whitespace only, every value as written (undo with Ctrl+Z).");
}
$("format").addEventListener("click", formatDoc);

// ---- step by step ------------------------------------------------------------

const stepInput = /** @type {HTMLInputElement} */ ($("step"));
const byStep = /** @type {HTMLInputElement} */ ($("by-step"));

function syncSteps() {
  const n = view.stepCount;
  const label = $("step-label");
  label.classList.toggle("stale", view.state === "stale");
  if (!byStep.checked || n === null || (view.state !== "ok" && view.state !== "stale")) {
    stepInput.disabled = true;
    label.textContent = "";
    return;
  }
  if (view.state === "stale") {
    // The steps are the last valid request's: said so, and not moved.
    stepInput.disabled = true;
    label.textContent = `${view.step} / ${n} · last valid request`;
    return;
  }
  stepInput.disabled = false;
  stepInput.max = String(n);
  if (view.step === null || view.step > n) {
    stepInput.value = String(n);
    view.step = n;
  }
  $("step-label").textContent = `${view.step} / ${n}`;
}

byStep.addEventListener("change", () => {
  if (byStep.checked) view.trajectory = true;
  else {
    view.step = null;
    view.trajectory = false;
  }
  syncSteps();
});
stepInput.addEventListener("input", () => {
  view.step = Number(stepInput.value);
  $("step-label").textContent = `${view.step} / ${view.stepCount}`;
});
// A step let go of is an address (back and forward return to it).
stepInput.addEventListener("change", () => pushAddress());

// ---- finding things: in the prompt, a step ------------------------------------

const find = /** @type {HTMLInputElement} */ ($("find"));
let findTimer = 0;
find.addEventListener("input", () => {
  clearTimeout(findTimer);
  findTimer = window.setTimeout(() => view.search(find.value), 150);
});
find.addEventListener("keydown", (e) => {
  if (e.key !== "Enter") return;
  e.preventDefault();
  clearTimeout(findTimer);
  if (view.searchState.query !== find.value) view.search(find.value);
  else view.nextHit(e.shiftKey ? -1 : 1);
});
$("find-next").addEventListener("click", () => view.nextHit(1));
$("find-prev").addEventListener("click", () => view.nextHit(-1));
view.addEventListener("polyloop-search", () => showFindCount());
/** "k of n" for the search in the prompt. */
function showFindCount() {
  const { query, count, current } = view.searchState;
  $("find-count").textContent = !query ? "" : count ? `${fmt.format(current + 1)} of ${fmt.format(count)}` : "no match";
}

const gotoStep = /** @type {HTMLInputElement} */ ($("goto-step"));
gotoStep.addEventListener("keydown", (e) => {
  if (e.key !== "Enter") return;
  e.preventDefault();
  goToStep(Number(gotoStep.value));
});
gotoStep.addEventListener("change", () => goToStep(Number(gotoStep.value)));
/** Scrolls the prompt to step k (1-based), or says why it cannot. @param {number} k */
function goToStep(k) {
  const note = $("goto-note");
  if (view.goToStep(k)) {
    note.textContent = "";
    return;
  }
  const n = view.stepCount ?? 0;
  note.textContent =
    !Number.isInteger(k) || k < 1 || k > n
      ? `no step ${gotoStep.value || "?"}: this request has ${plural(n, "step")}`
      : `step ${k} is not shown: the step slider is at ${view.step}`;
}

// ---- files: picker and drag-and-drop ----------------------------------------

/** @type {{label: string, line?: number, size?: number, raw?: Uint8Array, text?: string, bytes?: Uint8Array, json?: boolean, error?: string}[]} */
let fileRequests = [];
/** The entry of the open file last loaded and its generation in the view. @type {{k: number, gen: number} | null} */
let lastPick = null;
/** An address naming an entry (a line) of a file not open: gone to once a file is opened.
 * @type {{line: string, step: string | null} | null} */
let pendingAddress = null;

/** The file last opened, for "Open as JSON lines". @type {{name: string, bytes: Uint8Array} | null} */
let lastFile = null;

/**
 * Opens a file: its requests (requestsOfFile), the first one loaded.
 * @param {{name: string, size: number, arrayBuffer(): Promise<ArrayBuffer>}} file
 * @param {{lines?: boolean, split?: import("./runs.js").Split}} [opts] JSON lines whatever the name (an explicit
 *   choice); how its lines are read into runs (runs.js; default one run's calls)
 */
async function openFile(file, opts = {}) {
  if (file.size > MAX_STRING_UNITS) {
    notice(`Not opened ${file.name}: ${tooLargeText(file.size)}`, "bad");
    return;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const requests = requestsOfFile(bytes, file.name, opts);
  if (requests.length === 1 && requests[0].error) {
    notice(`Not opened ${file.name}: ${requests[0].error}`, "bad");
    return;
  }
  fileRequests = requests;
  fileName = file.name;
  lastFile = { name: file.name, bytes };
  // An address that named an entry before the file was open: that entry is the first shown (never another).
  const goal = pendingAddress;
  pendingAddress = null;
  const goalK = goal && requests.length > 1 ? requests.findIndex((r) => String(r.line) === goal.line) : -1;
  const first = Math.max(0, goalK);
  browser.open(/** @type {any} */ (requests), (items, onProgress) => view.verdicts(items, onProgress));
  browser.select(first);
  runSplit.value = opts.split ?? "calls";
  report.open(/** @type {any} */ (requests), /** @type {any} */ (runSplit.value));
  const asLines = /** @type {HTMLButtonElement} */ ($("as-lines"));
  asLines.textContent = requests[0]?.raw ? "Open as JSON lines" : "Open as a msgpack stream";
  let opened = `Opened ${file.name}: ${fileRequests.length === 1 ? "one request" : `${fmt.format(fileRequests.length)} requests (pick one in the list)`}.`;
  if (goal && goalK >= 0) opened += ` The address named line ${goal.line}: shown.`;
  else if (goal) opened += ` The address named line ${goal.line}, which this file does not have: line ${requests[0]?.line ?? 1} shown.`;
  await loadPicked(first, opened);
  following = true;
  try {
    if (goal && goalK >= 0 && goal.step !== null) applyStep(goal.step, true);
  } finally {
    following = false;
  }
  pushAddress();
  // One request read from lines that are each an object: the CLI's reading
  // (one JSON text), and the other one offered.
  asLines.hidden = !(requests.length === 1 && !opts.lines && looksLikeLines(bytes));
}

$("as-lines").addEventListener("click", () => {
  if (!lastFile) return;
  const { name, bytes } = lastFile;
  openFile({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer }, { lines: true });
});

/** The list of a file's entries (shown for two or more). */
const browser = new EntryBrowser(
  {
    pane: $("browser"),
    list: $("browser-list"),
    rows: $("browser-rows"),
    search: /** @type {HTMLInputElement} */ ($("browser-search")),
    errors: /** @type {HTMLInputElement} */ ($("browser-errors")),
    count: $("browser-count"),
  },
  (k) => loadPicked(k).then(() => pushAddress()),
);

// ---- prompt caching (caching.js): the provider's request body, a run's cache report ----

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

const report = new RunReport(
  { pane: $("run"), totals: $("run-totals"), call: $("run-call"), chart: $("run-chart"), table: $("run-table") },
  view,
  { pick: (k) => browser.pick(k), changed: () => browser.refreshRows() },
);
browser.callOf = (k) => report.callOf(k);
const runSplit = /** @type {HTMLSelectElement} */ ($("run-split"));
runSplit.addEventListener("change", () => {
  report.open(/** @type {any} */ (fileRequests), /** @type {any} */ (runSplit.value));
  if (fileRequests.length > 1 && lastPick) report.pick(lastPick.k, lastPick.gen);
  browser.refreshRows();
});

/** A bigint as its exact JSON number (JSON.rawJSON), never rounded. */
const exactInts = (/** @type {string} */ _k, /** @type {any} */ v) =>
  typeof v === "bigint" ? /** @type {any} */ (JSON).rawJSON(String(v)) : v;

/** Shows request k of the open file: a new document (nothing of the
 * previous one's prompt stays on screen); the notice says what the view
 * judges, after `prefix`. */
async function loadPicked(k, prefix = "") {
  const r = fileRequests[k];
  if (!r) return;
  const say = (text, cls = "") => notice([prefix, text].filter(Boolean).join(" "), cls);
  pickedRequest = r;
  markEdited(null);
  if (fileRequests.length > 1) $("editor-title").textContent = `Request · ${r.label}`;
  else $("editor-title").textContent = "Request";
  let gen;
  if (r.bytes && !r.json) {
    let shown;
    try {
      const { decode: decodeMsgpack } = await import("@msgpack/msgpack");
      shown = JSON.stringify(decodeMsgpack(r.bytes, { useBigInt64: true }), exactInts, 2);
    } catch {
      shown = "";
    }
    afterEdit = "Edited: the view now judges the editor's text (the JSON copy, edited), not the msgpack file's bytes.";
    gen = setDoc(shown ?? "", { bytes: r.bytes, fresh: true });
    say("msgpack file: the view judges the file's bytes; the editor shows a JSON copy (your first edit switches to it).");
  } else if (r.invalid) {
    gen = setDoc(/** @type {string} */ (r.text), { bytes: r.bytes, json: true, fresh: true, lock: true });
    say(
      "This request is not valid UTF-8: the view judges the file's bytes, as the CLI does. The editor shows them with U+FFFD (\uFFFD) and takes no edit; “Convert to text” replaces the invalid bytes and judges the editor's text from then on.",
      "bad",
    );
  } else if (r.mixed) {
    afterEdit = "Edited: the view now judges the editor's text, whose line breaks are all LF (byte offsets count that text, not the file).";
    gen = setDoc(/** @type {string} */ (r.text), { bytes: r.bytes, json: true, fresh: true });
    say(
      "This file mixes line breaks (CR, LF, CRLF): the view judges the file's bytes, as the CLI does, until your first edit; then the editor's text (line breaks LF).",
    );
  } else {
    gen = setDoc(/** @type {string} */ (r.text), { fresh: true, crlf: r.crlf });
    say(r.crlf ? "CRLF line breaks: kept when judged, so byte offsets are the file's." : "");
  }
  lastPick = { k, gen };
  if (fileRequests.length > 1) report.pick(k, gen);
}

// ---- comparing two requests (compare.js) ----------------------------------------

/** The open file's name, and the request of it the editor last loaded. */
let fileName = "";
/** @type {any} */
let pickedRequest = null;

/** A request of a file as a side of the comparison: its bytes as the file
 * holds them (the module judges them, as the CLI does), or its error. */
function sideOf(r, label) {
  if (r.error) return `Not compared ${label}: ${r.error}`;
  if (r.bytes && !r.json) return { side: { kind: "bytes", bytes: r.bytes.slice() }, label };
  return { side: { kind: "jsonBytes", bytes: r.raw.slice() }, label };
}

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
      const n = fmt.format(editor.state.doc.length);
      if (fromBytes && pickedRequest)
        return /** @type {any} */ (sideOf(pickedRequest, `pinned copy of the editor (${pickedRequest.label})`));
      return { side: { kind: "text", text: editor.state.doc.toString() }, label: `pinned copy of the editor (${n} characters)` };
    },
    picked: () => {
      const r = fileRequests.length > 1 ? fileRequests[browser.selected] : null;
      return r ? /** @type {any} */ (sideOf(r, `${fileName} · ${r.label}`)) : null;
    },
    file: async (f) => {
      if (f.size > MAX_STRING_UNITS) return `Not compared ${f.name}: ${tooLargeText(f.size)}`;
      const rs = requestsOfFile(new Uint8Array(await f.arrayBuffer()), f.name);
      return sideOf(rs[0], rs.length > 1 ? `${f.name} · ${rs[0].label} (the first of ${fmt.format(rs.length)})` : f.name);
    },
    notice,
  },
);

$("open").addEventListener("click", () => /** @type {HTMLInputElement} */ ($("file")).click());
$("file").addEventListener("change", (ev) => {
  const f = /** @type {HTMLInputElement} */ (ev.target).files?.[0];
  if (f) openFile(f);
});
let dragDepth = 0;
window.addEventListener("dragenter", (e) => {
  if (!e.dataTransfer?.types.includes("Files")) return;
  dragDepth++;
  $("drop").hidden = false;
});
window.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) {
    dragDepth = 0;
    $("drop").hidden = true;
  }
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => {
  e.preventDefault();
  dragDepth = 0;
  $("drop").hidden = true;
  const f = e.dataTransfer?.files?.[0];
  if (f) openFile(f);
});

// ---- the sample files of examples/ --------------------------------------------

/** A sample file of the repository's examples/ (served beside the page) as a File-like. @param {string} name */
async function exampleFile(name) {
  const r = await fetch(`./examples/${name}`, { cache: "no-cache" });
  if (!r.ok) throw new Error(`examples/${name}: HTTP ${r.status} (run the page with \`make preview\`, which serves them)`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return { name, size: bytes.length, arrayBuffer: async () => bytes.buffer };
}

/** Opens example `value` of the Examples menu (asking first when the editor holds edits). @param {string} value */
async function openExample(value) {
  if (!value) return;
  if (hasEdits() && !(await askToReplace())) return notice("Kept your edits; the example was not opened.");
  try {
    if (value === "compare") {
      const [a, b] = await Promise.all(["compare-a.json", "compare-b.json"].map(exampleFile));
      await openFile(a);
      compare.set("a", /** @type {any} */ (sideOf(requestsOfFile(new Uint8Array(await a.arrayBuffer()), a.name)[0], a.name)));
      compare.set("b", /** @type {any} */ (sideOf(requestsOfFile(new Uint8Array(await b.arrayBuffer()), b.name)[0], b.name)));
      notice("Opened compare-a.json; the comparison below is compare-a.json (A) against compare-b.json (B).");
    } else
      await openFile(
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

// ---- everyday comforts: storage, share link, reset, theme, copy ----------------

let saveTimer = 0;
function scheduleSave() {
  clearTimeout(saveTimer);
  saveTimer = window.setTimeout(() => {
    if (fromBytes) return;
    if (editor.state.doc.length > STORE_LIMIT) {
      localStorage.removeItem(STORE_KEY);
      notice(
        `This request (${fmt.format(editor.state.doc.length)} characters) is too large to keep across reloads (limit ${fmt.format(STORE_LIMIT)}); save it as a file.`,
      );
      return;
    }
    try {
      localStorage.setItem(STORE_KEY, editor.state.doc.toString());
    } catch {
      notice("The browser refused to store this request (storage full); it will not survive a reload.");
    }
  }, 400);
}

/** The request of the share link in the address, or null (with a notice when the link is refused). */
async function fromShareLink() {
  const got = await readShareLink(location.hash);
  if (got && "refused" in got) notice(got.refused, "bad");
  return got && "text" in got ? got.text : null;
}

$("share").addEventListener("click", async () => {
  if (fromBytes) {
    notice(
      "No share link for this request: the view judges a file's bytes, and a link holds the editor's text (which differs). Share the file, or edit (“Convert to text” for a file that is not UTF-8) first.",
      "bad",
    );
    return;
  }
  const { url, size } = await shareLink(editor.state.doc.toString());
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

let example = FALLBACK_EXAMPLE;
async function loadExample() {
  try {
    const r = await fetch("./react.json", { cache: "no-cache" });
    if (r.ok) return await r.text();
  } catch {
    // fall through
  }
  return FALLBACK_EXAMPLE;
}

$("reset").addEventListener("click", () => {
  if (editor.state.doc.toString() === example) return;
  const d = /** @type {HTMLDialogElement} */ ($("confirm-reset"));
  d.returnValue = "";
  d.showModal();
});
$("confirm-reset").addEventListener("close", () => {
  const d = /** @type {HTMLDialogElement} */ ($("confirm-reset"));
  if (d.returnValue !== "discard") return;
  localStorage.removeItem(STORE_KEY);
  leaveFile();
  setDoc(example, { fresh: true });
  notice("Reset to the example request.");
});

const THEMES = ["auto", "light", "dark"];
function applyTheme(t) {
  const dark = t === "dark" || (t === "auto" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = t;
  if (t === "auto") view.removeAttribute("theme");
  else view.setAttribute("theme", t);
  if (editor) cm.then(({ setDark }) => setDark(editor, dark));
  $("theme").textContent = `Theme: ${t}`;
  $("theme").title = `Colour theme: ${t === "auto" ? "auto follows the system" : t}; click to change`;
}
$("theme").addEventListener("click", () => {
  const t = THEMES[(THEMES.indexOf(document.documentElement.dataset.theme ?? "auto") + 1) % THEMES.length];
  localStorage.setItem(THEME_KEY, t);
  applyTheme(t);
});
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme(document.documentElement.dataset.theme ?? "auto"));

// ---- the address: a share link, an entry and a step ------------------------------

/** Set while the page follows the address (no new history entry then). */
let following = false;

/**
 * The address of what is shown: `#entry=L` (line L of the open file, with
 * two or more entries) and `&step=K` (the step slider). Pushed as a history
 * entry, so back and forward return to it.
 */
function pushAddress() {
  if (following) return;
  const parts = [];
  if (fileRequests.length > 1 && pickedRequest?.line) parts.push(`entry=${pickedRequest.line}`);
  if (byStep.checked && view.step !== null) parts.push(`step=${view.step}`);
  const hash = parts.length ? `#${parts.join("&")}` : "";
  if (hash === location.hash) return;
  history.pushState(null, "", `${location.pathname}${location.search}${hash}`);
}

/** Asks before replacing the editor's edits; whether to go on. */
function askToReplace() {
  const d = /** @type {HTMLDialogElement} */ ($("confirm-link"));
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "open"), { once: true }));
}

/** Closes the open file (its list, its entry's title): the editor's next
 * document is not one of its entries. */
function leaveFile() {
  fileRequests = [];
  pickedRequest = null;
  browser.open([], () => {});
  report.open([]);
  $("editor-title").textContent = "Request";
  $("as-lines").hidden = true;
}

/** Drops the address's fragment (the page shows what it names no more). */
const dropHash = () => history.replaceState(null, "", location.pathname + location.search);

/**
 * Follows the address: a share link (`#req=`, after asking when the editor
 * holds edits), or an entry and step of the open file.
 */
async function followAddress() {
  if (!editor) return;
  if (location.hash.startsWith("#req=")) {
    const shared = await fromShareLink();
    if (shared === null) return dropHash();
    if (hasEdits() && editorText(shared) !== editor.state.doc.toString() && !(await askToReplace())) {
      dropHash();
      notice("Kept your edits; the share link was not opened (paste it again to open it).");
      return;
    }
    dropHash();
    leaveFile();
    setDoc(shared, { fresh: true });
    notice("Loaded the request from the share link.");
    return;
  }
  const params = new URLSearchParams(location.hash.slice(1));
  const line = params.get("entry");
  const step = params.get("step");
  following = true;
  try {
    if (line !== null) {
      const k = fileRequests.findIndex((r) => String(r.line) === line);
      if (k < 0 || fileRequests.length < 2) {
        pendingAddress = { line, step };
        notice(
          `This address names line ${line} of a file that is not open here: open that file (Open file…) and the page goes to line ${line}${step === null ? "" : `, step ${step}`}. What is shown now is not line ${line}.`,
          "bad",
        );
        $("editor-title").textContent = `Request · not line ${line} (its file is not open)`;
        return;
      }
      if (k !== browser.selected) {
        browser.select(k);
        await loadPicked(k);
      }
    }
    applyStep(step, line !== null);
  } finally {
    following = false;
  }
}

/** The address's step: the slider at it (null: the slider off, when the address names an entry). */
function applyStep(/** @type {string | null} */ step, /** @type {boolean} */ named) {
  if (step !== null) {
    if (!byStep.checked) {
      byStep.checked = true;
      view.trajectory = true;
    }
    view.step = Number(step);
    stepInput.value = step;
    syncSteps();
  } else if (byStep.checked && named) {
    byStep.checked = false;
    view.step = null;
    view.trajectory = false;
    syncSteps();
  }
}
window.addEventListener("popstate", () => followAddress());
window.addEventListener("hashchange", () => followAddress());

// ---- start -------------------------------------------------------------------

/** @type {{asm: any, firstPainted: number | null}} */
const state = { asm: null, firstPainted: null };

async function main() {
  applyTheme(localStorage.getItem(THEME_KEY) ?? "auto");
  const shared = await fromShareLink();
  const stored = localStorage.getItem(STORE_KEY);
  example = await loadExample();
  let text = example;
  loaded = editorText(example);
  const savedEdits = stored !== null && stored !== example && stored !== shared;
  if (shared !== null && savedEdits && !(await askToReplace())) {
    text = stored;
    dropHash();
    notice("Kept your saved edits; the share link was not opened (open it again to be asked again).");
  } else if (shared !== null) {
    text = shared;
    loaded = editorText(shared);
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
  cmNow = await cm;
  const { createEditor } = cmNow;
  const dark =
    document.documentElement.dataset.theme === "dark" ||
    (document.documentElement.dataset.theme === "auto" && matchMedia("(prefers-color-scheme: dark)").matches);
  editor = createEditor($("editor"), text, onEditorChange, onEditorUpdate, dark);
  docChanged();
  // An address naming an entry: no file is open yet, so the page says so and goes there once it is.
  if (/(^#|&)entry=/.test(location.hash)) await followAddress();
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
      return editor;
    },
    shareLink,
    requestsOfFile,
    openFile,
    openExample,
    browser,
    compare,
    exporter,
    report,
    inflateBounded,
    /** Replaces the text; resolves when its result is rendered. */
    setText: (text) => view.whenRendered(setDoc(text)),
    /** One edit as a user makes it; resolves when its result is rendered. */
    edit: (from, to, insert) => {
      editor.dispatch({ changes: { from, to, insert } });
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
