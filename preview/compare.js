// The preview's comparison view: two sides, A and B (a pinned copy of the
// editor, the editor as it is edited, an entry of the open file, a file),
// compared by the module's `compare` export in the view's worker
// (docs/SPEC.md §7.9). The page computes nothing of the comparison: it shows
// the core's answer field by field: where the prompts first differ (message,
// character, segment, an excerpt of each side), which prefix digests still
// match, and how many characters of cacheable prefix B keeps.
//
// Request text only ever reaches the page as text nodes. Never innerHTML.

import { appendLine, h } from "./element/text.js";

const fmt = new Intl.NumberFormat("en-US");

/**
 * One side as the worker takes it (see PromptView.compare), with the words
 * that name it in the panel and whether it follows the editor.
 * @typedef {{side: {kind: string, text?: string, bytes?: Uint8Array}, label: string, live?: boolean}} Side
 */

/** The segments of a request in prompt order (docs/SPEC.md §3), and the
 * prefix digest each one closes (§6; history has none). */
const SEGMENTS = [
  { name: "run", digest: "run" },
  { name: "injections", digest: "injections" },
  { name: "goal", digest: "goal" },
  { name: "history", digest: null },
];

/** What each kind of first difference means (docs/SPEC.md §7.9). */
const KINDS = {
  role: "the roles differ",
  text: "the texts differ",
  blocks: "the same text, split into other blocks",
  length: "one prompt has no such message",
};

/** A text node's worth of `text`, newlines and invisible characters marked
 * (as the prompt view marks them), appended to `el`. */
function appendMarked(el, text) {
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line) appendLine(el, line);
    if (i < lines.length - 1) el.append(h("span", { class: "nl" }, "\n"));
  });
  return el;
}

/** An element holding one field of the answer (the tests read it by name). */
const field = (tag, name, text, attrs = {}) => h(tag, { "data-field": name, ...attrs }, text);

/** The panel: its buttons, the sides picked and the newest answer shown. */
export class ComparePanel {
  /**
   * @param {{pane: HTMLElement, toggle: HTMLButtonElement, close: HTMLButtonElement, result: HTMLElement, labelA: HTMLElement, labelB: HTMLElement, buttons: Record<string, HTMLButtonElement>, files: {a: HTMLInputElement, b: HTMLInputElement}}} ui
   * @param {import("@polyloop/preview").PromptView} view
   * @param {{editor: () => Side | string, picked: () => Side | string | null, file: (f: File) => Promise<Side | string>, notice: (text: string, cls?: string) => void}} sources
   */
  constructor(ui, view, sources) {
    this.ui = ui;
    this.view = view;
    this.sources = sources;
    /** @type {{a: Side | null, b: Side | null}} */
    this.sides = { a: null, b: null };
    /** The id of the newest comparison asked; older answers are dropped. */
    this.seq = 0;
    /** The newest answer shown: {answer} or {error}, and its id, for tests. */
    this.shown = null;
    this.shownSeq = 0;
    ui.toggle.addEventListener("click", () => this.setOpen(ui.pane.hidden));
    ui.close.addEventListener("click", () => this.setOpen(false));
    const b = ui.buttons;
    b.pinA.addEventListener("click", () => this.set("a", sources.editor()));
    b.liveB.addEventListener("click", () => this.set("b", { side: { kind: "current" }, label: "the editor, as you edit it", live: true }));
    for (const s of /** @type {const} */ (["a", "b"])) {
      b[`entry_${s}`].addEventListener("click", () => this.setPicked(s));
      b[`file_${s}`].addEventListener("click", () => ui.files[s].click());
      ui.files[s].addEventListener("change", () => this.setFile(s));
    }
    view.addEventListener("polyloop-rendered", () => {
      if (this.sides.a?.live || this.sides.b?.live) this.refresh();
    });
  }

  /** Opens or closes the panel; opened with nothing picked, A is a pinned
   * copy of the editor and B the editor as it is edited. */
  setOpen(open) {
    this.ui.pane.hidden = !open;
    this.ui.toggle.setAttribute("aria-expanded", String(open));
    if (!open) return;
    const pinned = this.sides.a ?? this.sources.editor();
    if (typeof pinned !== "string") this.sides.a = pinned;
    if (!this.sides.b) this.sides.b = { side: { kind: "current" }, label: "the editor, as you edit it", live: true };
    this.refresh();
    this.ui.pane.scrollIntoView({ block: "nearest" });
  }

  /** @param {"a" | "b"} s @param {Side | string} side a side, or why there is none */
  set(s, side) {
    if (typeof side === "string") return this.sources.notice(side, "bad");
    this.sides[s] = side;
    if (this.ui.pane.hidden) this.setOpen(true);
    else this.refresh();
  }

  /** @param {"a" | "b"} s */
  setPicked(s) {
    const side = this.sources.picked();
    if (side !== null) this.set(s, side);
    else this.sources.notice("Open a file of several requests (JSON lines) and pick an entry in its list first.", "bad");
  }

  /** @param {"a" | "b"} s */
  async setFile(s) {
    const input = this.ui.files[s];
    const f = input.files?.[0];
    input.value = "";
    if (!f) return;
    this.set(s, await this.sources.file(f));
  }

  /** Asks the worker for the comparison of the sides and shows its answer
   * (unless a newer one was asked meanwhile). */
  async refresh() {
    const { a, b } = this.sides;
    this.ui.labelA.textContent = a?.label ?? "nothing yet";
    this.ui.labelB.textContent = b?.label ?? "nothing yet";
    if (!a || !b || this.ui.pane.hidden) return;
    const id = ++this.seq;
    this.ui.result.setAttribute("aria-busy", "true");
    const got = await this.view.compare(a.side, b.side);
    if (id !== this.seq) return;
    this.shown = got;
    this.shownSeq = id;
    this.ui.result.removeAttribute("aria-busy");
    this.ui.result.replaceChildren(...("error" in got ? [errorOf(got.error)] : answerOf(got.answer)));
    this.ui.pane.dispatchEvent(new CustomEvent("polyloop-compared", { detail: got }));
  }
}

/** The error of a side: the core's code, path (prefixed with the side) and message. */
function errorOf(e) {
  const side = e.path.startsWith("b") ? "B" : "A";
  return h(
    "p",
    { class: "cmp-error" },
    `Side ${side} is not a valid request or message list: `,
    field("code", "error.code", e.code),
    e.path ? " at " : "",
    e.path ? field("code", "error.path", e.path) : "",
    ": ",
    field("span", "error.message", e.message),
  );
}

/** The answer's parts: the summary, the excerpts at the difference, the
 * cacheable prefix, then the segments and the two sides' sizes. */
function answerOf(ans) {
  const d = ans.first_difference;
  return [summaryOf(ans), d ? excerptsOf(d) : null, cacheOf(ans), segmentsOf(ans), sidesOf(ans)].filter((x) => x !== null);
}

/** One sentence: identical, or where the prompts first differ. */
function summaryOf(ans) {
  const d = ans.first_difference;
  if (ans.identical) return h("p", { class: "cmp-summary ok" }, field("strong", "identical", "A and B send the same prompt."));
  return h(
    "p",
    { class: "cmp-summary" },
    "The prompts first differ at ",
    h("strong", {}, "message ", field("span", "message", fmt.format(d.message)), ", character ", field("span", "char", fmt.format(d.char))),
    ": ",
    field("span", "kind", d.kind, { class: "cmp-kind" }),
    ` (${KINDS[d.kind] ?? d.kind})`,
    ...(d.segment === null ? [] : [", in the ", field("span", "segment", d.segment), " segment"]),
    ...(d.step === null ? [] : [", step ", field("span", "step", fmt.format(d.step))]),
    ".",
  );
}

/** Each side's kind, messages and prompt characters. */
function sidesOf(ans) {
  const one = (s) =>
    h(
      "li",
      {},
      h("span", { class: "cmp-side" }, s.toUpperCase()),
      " ",
      field("span", `${s}.kind`, ans[s].kind === "request" ? "request" : "recorded messages"),
      " · ",
      field("span", `${s}.messages`, fmt.format(ans[s].messages)),
      " messages · ",
      field("span", `${s}.prompt_chars`, fmt.format(ans[s].prompt_chars)),
      " characters",
    );
  return h("ul", { class: "cmp-sides", "aria-label": "The two prompts" }, one("a"), one("b"));
}

/** The segments in prompt order: whether each prefix digest still matches
 * (the answer's prefix_digests), and the first difference in its segment. */
function segmentsOf(ans) {
  const d = ans.first_difference;
  const digestText = (v) => (v === true ? "matches" : v === false ? "differs" : "no request");
  const rows = SEGMENTS.map(({ name, digest }) => {
    const v = digest === null ? undefined : ans.prefix_digests[digest];
    const here = d !== null && d.segment === name;
    return h(
      "tr",
      { class: here ? "here" : undefined, "data-segment": name },
      h("th", { scope: "row" }, name),
      v === undefined
        ? h("td", { class: "muted" }, "no digest (§6)")
        : h("td", { class: v === true ? "ok" : v === false ? "bad" : "muted" }, field("span", `prefix_digests.${digest}`, digestText(v))),
      h("td", {}, here ? `first difference: message ${fmt.format(d.message)}${d.step === null ? "" : `, step ${fmt.format(d.step)}`}` : ""),
    );
  });
  return h(
    "table",
    { class: "cmp-segments" },
    h("caption", {}, "Segment by segment (the prefix digest of a segment covers the prompt up to its end)"),
    h(
      "thead",
      {},
      h("tr", {}, h("th", { scope: "col" }, "Segment"), h("th", { scope: "col" }, "Prefix digest"), h("th", { scope: "col" }, "Where")),
    ),
    h("tbody", {}, ...rows),
  );
}

/**
 * Each side's text at the first difference: the text both share just
 * before it, then the side's own text from it, its first character (a
 * role: the role) highlighted; a side without the message says so.
 */
function excerptsOf(d) {
  const side = (s) => {
    const excerpt = d[`excerpt_${s}`];
    const role = d[`role_${s}`];
    const text = h("span", { class: "cmp-text" });
    if (excerpt === null) text.append(h("em", {}, `no message ${fmt.format(d.message)}`));
    else {
      text.append(appendMarked(h("span", { class: "before", "data-field": "excerpt_before" }), d.excerpt_before));
      text.append(excerptText(excerpt, d.kind, s));
    }
    const roleEl = role === null ? null : field(d.kind === "role" ? "mark" : "span", `role_${s}`, role, { class: "cmp-role" });
    return h("div", { class: "cmp-excerpt", "data-side": s }, h("span", { class: "cmp-side" }, s.toUpperCase()), roleEl, text);
  };
  return h("div", { class: "cmp-excerpts", role: "group", "aria-label": "The two sides at the first difference" }, side("a"), side("b"));
}

/** A side's excerpt from the difference: its first code point marked (the
 * whole of it for a message the other side has not; the end of the text
 * marked when it ends there; nothing when the roles differ, the role is). */
function excerptText(excerpt, kind, s) {
  const el = h("span", { class: "from", "data-field": `excerpt_${s}` });
  if (kind === "role") return appendMarked(el, excerpt);
  if (excerpt === "") {
    el.append(h("mark", { class: "end", title: "the text ends here" }));
    return el;
  }
  const cut = kind === "length" ? excerpt.length : String.fromCodePoint(/** @type {number} */ (excerpt.codePointAt(0))).length;
  const mark = appendMarked(
    h("mark", { title: kind === "blocks" ? "a block starts or ends here on one side" : "the first difference" }),
    excerpt.slice(0, cut),
  );
  el.append(mark);
  if (cut < excerpt.length) appendMarked(el, excerpt.slice(cut));
  return el;
}

/** How much of B's prompt is a prefix A's already sent: the answer's
 * cacheable_prefix_chars of B's prompt_chars. */
function cacheOf(ans) {
  const kept = ans.cacheable_prefix_chars;
  const total = ans.b.prompt_chars;
  const pct = total === 0 ? 100 : Math.floor((kept / total) * 100);
  return h(
    "div",
    { class: "cmp-cache" },
    h(
      "p",
      {},
      "B keeps ",
      field("strong", "cacheable_prefix_chars", fmt.format(kept)),
      ` of its ${fmt.format(total)} characters as cacheable prefix (${pct}%).`,
    ),
    h("div", { class: "cmp-bar", "aria-hidden": "true" }, h("span", { style: `width: ${pct}%` })),
  );
}
