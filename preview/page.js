// What every part of the page uses: its elements by id, numbers as the page
// writes them, the notice line, and the two questions it asks (replace the
// editor's edits? drop the address?).

/** The page's element with this id. @param {string} id */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
export const fmt = new Intl.NumberFormat("en-US");
export const plural = (n, one, many = one + "s") => `${fmt.format(n)} ${n === 1 ? one : many}`;

/** Says `text` in the notice line (`cls` "bad" for what went wrong). */
export function notice(text, cls = "") {
  const n = $("notice");
  n.textContent = text;
  n.className = cls;
}

/** Asks before replacing the editor's edits; whether to go on. */
export function askToReplace() {
  const d = /** @type {HTMLDialogElement} */ ($("confirm-link"));
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "open"), { once: true }));
}

/** Drops the address's fragment (the page shows what it names no more). */
export const dropHash = () => history.replaceState(null, "", location.pathname + location.search);
