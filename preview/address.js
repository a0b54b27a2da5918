// The page's address: a share link (`#req=`), or an entry of the open file
// and a step (`#entry=L&step=K`). What is shown is pushed as a history entry
// (back and forward return to it); an address is followed when it changes.

import { editorText } from "./doc.js";
import { $, askToReplace, dropHash, notice } from "./page.js";
import { readShareLink } from "./share.js";

/** The request of the share link in the address, or null (with a notice when the link is refused). */
export async function fromShareLink() {
  const got = await readShareLink(location.hash);
  if (got && "refused" in got) notice(got.refused, "bad");
  return got && "text" in got ? got.text : null;
}

export class Address {
  /** Set while the page follows the address (no new history entry then). */
  #following = false;
  #doc;
  #opened;
  #steps;

  /**
   * @param {import("./doc.js").EditorDoc} doc
   * @param {() => import("./opened.js").OpenedFile} opened the open file (made after the address)
   * @param {() => ReturnType<typeof import("./steps.js").stepControls>} steps the step slider
   */
  constructor(doc, opened, steps) {
    this.#doc = doc;
    this.#opened = opened;
    this.#steps = steps;
    window.addEventListener("popstate", () => this.follow());
    window.addEventListener("hashchange", () => this.follow());
  }

  /**
   * The address of what is shown: `#entry=L` (line L of the open file, with
   * two or more entries) and `&step=K` (the step slider). Pushed as a history
   * entry, so back and forward return to it.
   */
  push() {
    if (this.#following) return;
    const opened = this.#opened();
    const step = this.#steps().step;
    const parts = [];
    if (opened.requests.length > 1 && opened.picked?.line) parts.push(`entry=${opened.picked.line}`);
    if (step !== null) parts.push(`step=${step}`);
    const hash = parts.length ? `#${parts.join("&")}` : "";
    if (hash === location.hash) return;
    history.pushState(null, "", `${location.pathname}${location.search}${hash}`);
  }

  /** The slider at the address's step (no history entry for it). @param {string} step */
  applyStep(step) {
    this.#following = true;
    try {
      this.#steps().applyStep(step, true);
    } finally {
      this.#following = false;
    }
  }

  /**
   * Follows the address: a share link (`#req=`, after asking when the editor
   * holds edits), or an entry and step of the open file.
   */
  async follow() {
    const doc = this.#doc;
    if (!doc.editor) return;
    const opened = this.#opened();
    if (location.hash.startsWith("#req=")) {
      const shared = await fromShareLink();
      if (shared === null) return dropHash();
      if (doc.hasEdits() && editorText(shared) !== doc.text() && !(await askToReplace())) {
        dropHash();
        notice("Kept your edits; the share link was not opened (paste it again to open it).");
        return;
      }
      dropHash();
      opened.leave();
      doc.set(shared, { fresh: true });
      notice("Loaded the request from the share link.");
      return;
    }
    const params = new URLSearchParams(location.hash.slice(1));
    const line = params.get("entry");
    const step = params.get("step");
    this.#following = true;
    try {
      if (line !== null) {
        const k = opened.indexOfLine(line);
        if (k < 0) {
          opened.goOnOpen({ line, step });
          notice(
            `This address names line ${line} of a file that is not open here: open that file (Open file…) and the page goes to line ${line}${step === null ? "" : `, step ${step}`}. What is shown now is not line ${line}.`,
            "bad",
          );
          $("editor-title").textContent = `Request · not line ${line} (its file is not open)`;
          return;
        }
        await opened.show(k);
      }
      this.#steps().applyStep(step, line !== null);
    } finally {
      this.#following = false;
    }
  }
}
