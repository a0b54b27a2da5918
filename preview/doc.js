// The editor's document: what it holds (a text, or a file's bytes shown as
// text), how it reaches the view (the changes, not the whole text), the lint
// marks of the view's errors, and keeping it across reloads (localStorage).

import { lineColumnAt, formatJSON } from "./jsontext.js";
import { $, fmt, notice, plural } from "./page.js";

/** localStorage key of the request; texts larger than STORE_LIMIT are not kept. */
export const STORE_KEY = "polyloop-preview:request";
const STORE_LIMIT = 2_000_000;

/**
 * The text as the editor holds it: CodeMirror splits lines at CRLF, CR and
 * LF and joins them with LF, so the view is always sent the editor's text
 * (editor positions apply to it), never a file's raw line endings.
 * @param {string} text
 */
export function editorText(text) {
  return text.includes("\r") ? text.split(/\r\n?|\n/).join("\n") : text;
}

/**
 * @typedef {object} DocHooks
 * @property {() => void} invalidate the document changed (the export panel's body is stale)
 * @property {(doc: import("@codemirror/state").Text) => void} edited an edit was made (the list and report mark it)
 * @property {() => number} fffd U+FFFD the loaded request held before conversion
 */

export class EditorDoc {
  #view;
  /** @type {DocHooks} */
  #hooks;
  /** The editor module (CodeMirror), loading from the start. */
  #cm = import("./editor.js");
  /** @type {typeof import("./editor.js") | null} the editor module once loaded */
  #cmNow = null;
  /** @type {import("@codemirror/view").EditorView | undefined} */
  #editor;
  /** Set while the page replaces the whole document (so it is sent as text). */
  #replacing = false;
  /** The document came from bytes the editor cannot hold as they are (msgpack,
   * JSON that is not valid UTF-8, JSON with mixed line breaks): the view
   * judges those bytes, not the editor's text. */
  #fromBytes = false;
  /** The document is a file the engine judges for its bytes (not UTF-8): the
   * editor takes no edit until "Convert to text" replaces them. */
  #locked = false;
  /** How the view judges the editor's line breaks: "\r\n" for a CRLF file
   * (byte offsets are the file's), else "\n". */
  #lineBreak = /** @type {"\n" | "\r\n"} */ ("\n");
  /** The text of the document last loaded (the example, a file, an entry, a
   * link): the editor holds edits when its text differs. */
  #loaded = "";
  /** Whether lint marks were set (the gutter keeps its marker through edits
   * that delete the marked range, so they are cleared by a new set). */
  #marked = false;
  #saveTimer = 0;
  /** What the view judges after the first edit of a document from bytes. */
  afterEdit = "";

  /** @param {import("@polyloop/preview").PromptView} view @param {DocHooks} hooks */
  constructor(view, hooks) {
    this.#view = view;
    this.#hooks = hooks;
    $("convert").addEventListener("click", () => this.convert());
    $("format").addEventListener("click", () => this.format());
    $("error-at").addEventListener("click", () => {
      const editor = /** @type {import("@codemirror/view").EditorView} */ (this.#editor);
      const at = Math.min(Number($("error-at").dataset.index), editor.state.doc.length);
      editor.dispatch({ selection: { anchor: at, head: Math.min(editor.state.doc.length, at + 1) }, scrollIntoView: true });
      editor.focus();
    });
    view.addEventListener("polyloop-locate", (/** @type {any} */ ev) => {
      const editor = /** @type {import("@codemirror/view").EditorView} */ (this.#editor);
      const { from, to } = ev.detail;
      const len = editor.state.doc.length;
      editor.dispatch({ selection: { anchor: Math.min(from, len), head: Math.min(to, len) }, scrollIntoView: true });
      editor.focus();
    });
  }

  /** The CodeMirror view (undefined while its code loads). */
  get editor() {
    return /** @type {import("@codemirror/view").EditorView} */ (this.#editor);
  }
  /** Whether the view judges a file's bytes, not the editor's text. */
  get fromBytes() {
    return this.#fromBytes;
  }
  /** The text of the document last loaded. */
  get loaded() {
    return this.#loaded;
  }
  set loaded(text) {
    this.#loaded = text;
  }
  /** The editor's text. */
  text() {
    return this.editor.state.doc.toString();
  }
  /** Whether the editor holds edits of the document last loaded. */
  hasEdits() {
    return Boolean(this.#editor) && !this.#fromBytes && this.text() !== this.#loaded;
  }

  /** Creates the editor (once its code has loaded) holding `text`. @param {string} text @param {boolean} dark */
  async start(text, dark) {
    this.#cmNow = await this.#cm;
    this.#editor = this.#cmNow.createEditor(
      $("editor"),
      text,
      (tr) => this.#onChange(tr),
      () => {
        if (!this.#replacing) this.#docChanged();
      },
      dark,
    );
    this.#docChanged();
  }

  /** The editor's colours. @param {boolean} dark */
  setDark(dark) {
    if (this.#editor) this.#cm.then(({ setDark }) => setDark(this.editor, dark));
  }

  /** A change to the document, sent to the view's worker as it is made. @param {import("@codemirror/state").Transaction} tr */
  #onChange(tr) {
    if (this.#replacing) return;
    if (this.#fromBytes) {
      this.#fromBytes = false;
      this.#view.setText(tr.newDoc.toString(), { lineBreak: this.#lineBreak });
      notice(this.afterEdit);
    } else {
      /** @type {[number, number, string][]} */
      const changes = [];
      tr.changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => changes.push([fromA, toA, inserted.toString()]));
      this.#view.applyChanges(changes);
    }
    this.#hooks.invalidate();
    this.#hooks.edited(tr.newDoc);
  }

  /**
   * Replaces the whole document and sends the view the editor's text, or
   * `bytes` (msgpack, or JSON bytes with `json`) until the first edit. The
   * view's worker gets it first (it assembles while the editor takes the
   * text). `fresh`: a new document (a file opened, an entry picked), not
   * compared with the result before and never shown over its prompt.
   * `lock`: the bytes are a file the engine judges for its bytes; the editor
   * takes no edit until converted (convert). `crlf`: the text is a CRLF
   * file's (judged with its CRLF line breaks).
   * @param {string} text
   * @param {{bytes?: Uint8Array | null, json?: boolean, fresh?: boolean, lock?: boolean, crlf?: boolean}} [opts]
   */
  set(text, { bytes = null, json = false, fresh = false, lock = false, crlf = false } = {}) {
    const editor = this.#editor;
    if (!editor) throw new Error("the editor is still loading");
    const view = this.#view;
    const doc = editorText(text);
    this.#fromBytes = Boolean(bytes);
    this.#lineBreak = crlf ? "\r\n" : "\n";
    let gen;
    if (!bytes) gen = view.setText(doc, { fresh, lineBreak: this.#lineBreak });
    else if (json) gen = view.setJSONBytes(bytes, { fresh });
    else gen = view.setBytes(bytes, { fresh });
    this.#replacing = true;
    try {
      if (this.#locked) this.#lock(false);
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: doc }, selection: { anchor: 0 }, scrollIntoView: true });
    } finally {
      this.#replacing = false;
    }
    this.#lock(lock && this.#fromBytes);
    this.#loaded = doc;
    this.#docChanged();
    this.#hooks.invalidate();
    return gen;
  }

  /** Locks the editor (a file judged for its bytes) or unlocks it; the
   * "Convert to text" button shows while locked. @param {boolean} on */
  #lock(on) {
    this.#locked = on;
    $("convert").hidden = !on;
    $("editor").classList.toggle("locked", on);
    this.#cmNow?.setLocked(this.editor, on);
  }

  /** "Convert to text": the locked document's text (each invalid byte
   * sequence already U+FFFD) becomes the request; the view judges it from now. */
  convert() {
    if (!this.#locked) return;
    const text = this.text();
    const replaced = [...text.matchAll(/\uFFFD/g)].length - this.#hooks.fffd();
    this.#lock(false);
    this.#fromBytes = false;
    this.#view.setText(text, { lineBreak: this.#lineBreak });
    this.#hooks.invalidate();
    notice(
      `Converted to text: ${plural(replaced, "invalid byte sequence")} replaced with U+FFFD (\uFFFD). The view now judges the editor's text, not the file's bytes.`,
    );
    this.scheduleSave();
  }

  #docChanged() {
    const cmNow = this.#cmNow;
    const { doc } = this.editor.state;
    const n = doc.length;
    const plain =
      cmNow && n > cmNow.PLAIN_ABOVE
        ? ` · plain text above ${fmt.format(cmNow.PLAIN_ABOVE)} characters (no JSON highlighting, no hidden-character marks)`
        : "";
    $("doc-size").textContent = `${fmt.format(n)} characters · ${fmt.format(doc.lines)} lines${plain}`;
    this.scheduleSave();
  }

  /** Pretty-prints the request in the editor (one undoable edit): only
   * whitespace outside strings changes, every value is kept as written. */
  format() {
    const text = this.text();
    const pretty = formatJSON(text);
    if (pretty === text) return;
    this.editor.dispatch({ changes: { from: 0, to: text.length, insert: pretty }, selection: { anchor: 0 }, scrollIntoView: true });
    notice("Formatted: whitespace only, every value as written (undo with Ctrl+Z).");
  }

  // ---- the view's verdict in the editor: lint marks, the syntax error's place ----

  /** A result came: no lint mark, no syntax error shown. */
  clearMarks() {
    if (this.#marked) this.#cm.then(({ setDiagnostics }) => this.editor.dispatch(setDiagnostics(this.editor.state, [])));
    this.#marked = false;
    this.#showSyntaxPlace(null);
  }

  /** An error came: marked in the editor if its positions are of the editor's text. @param {any} e the error event's detail */
  markError(e) {
    // The error's positions are in the text of generation e.gen; mark them only
    // if no edit came since (the next result will mark again).
    this.#showSyntaxPlace(null);
    const editor = this.#editor;
    if (e.gen !== this.#view.generation || !e.location || this.#fromBytes || !editor) return;
    const len = editor.state.doc.length;
    let from = Math.min(e.location.from, len);
    let to = Math.max(from, Math.min(e.location.to, len));
    let what = e.syntax ? "JSON syntax error" : `${e.code}${e.path ? ` at ${e.path}` : ""}`;
    const place = e.syntax ? lineColumnAt(editor.state.doc.toString(), from) : null;
    if (place) {
      from = place.index;
      to = Math.min(len, from + 1);
      what = `JSON syntax error at line ${place.line}, column ${place.column}`;
      this.#showSyntaxPlace(place);
    }
    this.#marked = true;
    this.#cm.then(({ setDiagnostics }) =>
      editor.dispatch(
        setDiagnostics(editor.state, [{ from, to, severity: "error", message: `${what}: ${e.message}`, source: "assembly module" }]),
      ),
    );
  }

  /** Shows (or hides, for null) the syntax error's line and column beside
   * the editor's title; a click puts the cursor there. */
  #showSyntaxPlace(place) {
    const b = /** @type {HTMLButtonElement} */ ($("error-at"));
    /** @type {HTMLButtonElement} */ ($("format")).disabled = place !== null;
    b.hidden = place === null;
    if (!place) return;
    b.textContent = `JSON syntax error: line ${fmt.format(place.line)}, column ${fmt.format(place.column)}`;
    b.dataset.line = String(place.line);
    b.dataset.column = String(place.column);
    b.dataset.index = String(place.index);
  }

  // ---- kept across reloads ----------------------------------------------------

  scheduleSave() {
    clearTimeout(this.#saveTimer);
    this.#saveTimer = window.setTimeout(() => {
      if (this.#fromBytes) return;
      const { length } = this.editor.state.doc;
      if (length > STORE_LIMIT) {
        localStorage.removeItem(STORE_KEY);
        notice(
          `This request (${fmt.format(length)} characters) is too large to keep across reloads (limit ${fmt.format(STORE_LIMIT)}); save it as a file.`,
        );
        return;
      }
      try {
        localStorage.setItem(STORE_KEY, this.text());
      } catch {
        notice("The browser refused to store this request (storage full); it will not survive a reload.");
      }
    }, 400);
  }
}
