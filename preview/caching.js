// Prompt caching in the preview (issue 35): the provider toggle with the
// exact request body a provider's API takes (the element's exportRequest:
// the binding's `export`, JSON.stringify of its answer, the bytes the CLI's
// `polyloop-assemble export --provider P FILE` prints, without its newline).
// The cache report of a run is report.js. One state: what is shown is the
// answer for the request now in the view, or nothing ("exporting…"), never
// an older one's.
// Text reaches the page as text only (textContent), never markup.

import { PROVIDERS } from "./element/binding.js";
import { appendLine, fmt, h } from "./element/text.js";

/** @typedef {import("./report.js").Call} Call one call of a cache report (report.js) */

/** The longest export text put on screen (the copy is always whole). */
export const SHOW_CHARS = 1_000_000;

/**
 * The provider toggle's radios: "prompt" (in the page), then one per provider the core's export writes (the binding's
 * PROVIDERS, generated from the core: a provider added there shows here with no change to the page).
 * @param {HTMLFieldSetElement} fieldset
 * @returns {HTMLInputElement[]}
 */
export function providerRadios(fieldset) {
  for (const p of PROVIDERS) {
    const input = document.createElement("input");
    Object.assign(input, { type: "radio", name: "provider", value: p });
    const label = document.createElement("label");
    label.append(input, ` ${p}`);
    fieldset.append(label);
  }
  return [...fieldset.querySelectorAll('input[name="provider"]')];
}

/** An error as the page shows errors: its code, " at " its path, its message. */
function errorParts(/** @type {{code: string, path: string, message: string}} */ e) {
  return [
    h("div", {}, h("span", { class: "code" }, e.code), e.path ? " at " : "", e.path ? h("span", { class: "path" }, e.path) : ""),
    h("div", { class: "message" }, e.message),
  ];
}

export class ExportPanel {
  /**
   * @param {{radios: HTMLInputElement[], tools: HTMLElement, pane: HTMLElement, title: HTMLElement, size: HTMLElement, copy: HTMLButtonElement, error: HTMLElement, json: HTMLElement}} ui
   * @param {import("@polyloop/preview").PromptView} view
   * @param {{copyText: (t: string) => Promise<void>, notice: (t: string, cls?: string) => void, locate: (loc: any) => void}} page
   */
  constructor(ui, view, page) {
    this.ui = ui;
    this.view = view;
    this.page = page;
    /** @type {"prompt" | import("@polyloop/assembly").Provider} */
    this.provider = "prompt";
    /** the generation whose export is on screen (-1: none) */
    this.shownGen = -1;
    /** the text on screen, whole */
    this.text = "";
    for (const r of ui.radios) r.addEventListener("change", () => r.checked && this.choose(/** @type {any} */ (r.value)));
    ui.copy.addEventListener("click", async () => {
      if (this.shownGen < 0 || this.shownGen !== view.generation) return;
      await page.copyText(this.text + "\n");
      page.notice(
        `Copied the ${this.provider} request body: ${fmt.format(this.text.length + 1)} characters, as \`polyloop-assemble export\` prints it.`,
      );
    });
    view.addEventListener("polyloop-rendered", () => this.refresh());
  }

  /** Shows the prompt, or the request body of a provider. @param {"prompt" | import("@polyloop/assembly").Provider} provider */
  choose(provider) {
    this.provider = provider;
    for (const r of this.ui.radios) r.checked = r.value === provider;
    const on = provider !== "prompt";
    this.view.classList.toggle("off", on);
    this.ui.tools.hidden = on;
    this.ui.pane.hidden = !on;
    this.clear();
    this.refresh();
  }

  /** Drops what is shown (a new request came, or another provider). */
  clear() {
    const { title, size, copy, error, json } = this.ui;
    this.shownGen = -1;
    this.text = "";
    title.textContent = this.provider === "prompt" ? "" : `${this.provider} request body: exporting…`;
    size.textContent = "";
    copy.disabled = true;
    error.hidden = true;
    error.replaceChildren();
    json.textContent = "";
  }

  /** Called when the view is sent a new request: nothing of the one before stays on screen. */
  invalidate() {
    if (this.provider !== "prompt" && this.shownGen !== this.view.generation) this.clear();
  }

  /** Exports the view's request, if it is not on screen yet; shows it unless a newer one came meanwhile. */
  async refresh() {
    const provider = this.provider;
    if (provider === "prompt" || this.shownGen === this.view.generation) return;
    const got = await this.view.exportRequest(provider);
    if (provider !== this.provider || got.gen !== this.view.generation || this.shownGen === got.gen) return;
    this.clear();
    this.shownGen = got.gen;
    const { title, size, copy, error, json } = this.ui;
    if (got.error) {
      title.textContent = `${provider}: no request body, the export is refused`;
      const parts = errorParts(got.error);
      const loc = got.location;
      if (loc) {
        const b = h(
          "button",
          { type: "button", class: "locate" },
          `Show ${got.error.path.replace(/^request\.?/, "") || "the request"} in the editor`,
        );
        b.addEventListener("click", () => this.page.locate(loc));
        parts.push(h("div", {}, b));
      }
      error.replaceChildren(...parts);
      error.hidden = false;
      return;
    }
    const text = /** @type {string} */ (got.text);
    this.text = text;
    title.textContent = `${provider} request body`;
    size.textContent = `${fmt.format(text.length)} characters, compact JSON`;
    // Invisible characters marked with their code point, bidi controls isolated (as the prompt view
    // shows them: a U+202E in a text must not reorder the JSON around it); the text nodes keep the exact text.
    appendLine(json, text.length > SHOW_CHARS ? text.slice(0, SHOW_CHARS) : text);
    if (text.length > SHOW_CHARS) size.textContent += ` (the first ${fmt.format(SHOW_CHARS)} shown; Copy copies all)`;
    copy.disabled = false;
  }
}
