/**
 * The panes around the message list, each drawn from the element's state
 * `pv`: the bar (state, totals, gauge), the stale banner, the error panel,
 * "since the previous result", the cache breakpoints line and the prefix
 * digests. build() makes their DOM once.
 *
 * @module
 */

import { CSS } from "./styles.js";
import { SEGMENTS, fmt, h, plural } from "./text.js";
import { frameOf } from "./state.js";

/** @typedef {ReturnType<typeof build>} Ui @typedef {import("./state.js").Frame} Frame @typedef {import("./state.js").View} View */

// ---- DOM ----------------------------------------------------------------
/** @param {ShadowRoot} root */
export function build(root) {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(CSS);
  root.adoptedStyleSheets = [sheet];
  const state = h("span", { class: "state", role: "status", "aria-live": "polite" });
  const totals = h("span", { class: "totals" });
  const fill = h("div", { class: "fill" });
  const label = h("span", { class: "label" });
  const gauge = h("div", { class: "gauge none", title: "prompt_chars against max_prompt_chars" }, fill, label);
  const legend = h("span", { class: "legend", "aria-hidden": "true" }, ...SEGMENTS.map((s) => h("span", { class: `seg-${s}` }, s)));
  const bar = h("div", { class: "bar", part: "bar" }, state, totals, gauge, legend);
  const banner = h("div", { class: "stale-banner", hidden: true });
  const error = h("div", { class: "error", role: "alert", hidden: true });
  const cache = h("div", { class: "cache", "aria-live": "polite" });
  const bps = h("div", { class: "bps" });
  const rows = h("div", { class: "rows" });
  const list = h(
    "div",
    { class: "list", tabindex: "0", role: "region", "aria-label": "Assembled messages (arrow keys move between rows, Enter expands)" },
    rows,
  );
  const digestBody = h("tbody");
  const digestNote = h("span", { class: "stale-note" });
  const digests = h("details", { class: "digests" }, h("summary", {}, "Prefix digests", digestNote), h("table", {}, digestBody));
  // One frame fills the host whatever display the page gives it (a host rule `display: block; height:
  // 300px` leaves no blank band: the list takes the height left).
  root.append(h("div", { class: "frame" }, bar, banner, error, cache, bps, list, digests));
  return { state, totals, gauge, fill, label, banner, error, cache, bps, list, rows, digests, digestBody, digestNote };
}

export function setState(pv, s) {
  pv.state = s;
  pv.host.dataset.state = s;
  pv.host.classList.toggle("stale-view", s === "stale");
  const text = { loading: "loading…", ok: "assembled", stale: "stale", error: "error", empty: "no request" }[s];
  pv.ui.state.textContent = text;
  pv.ui.state.dataset.state = s;
  const e = pv.lastError;
  pv.ui.banner.hidden = s !== "stale";
  if (s === "stale" && e) {
    pv.ui.banner.textContent = e.syntax
      ? "Stale: the request is not valid JSON; the prompt below is from the last request that assembled."
      : `Stale: the request is rejected (${e.code}); the prompt below is from the last request that assembled.`;
  }
  if (s === "ok") pv.ui.error.hidden = true;
  const f = frameOf(pv);
  renderMarks(pv.ui, f);
  // "Since the previous result" describes a result: none while rejected.
  pv.ui.cache.hidden = s !== "ok";
  markResult(pv.ui, f);
}

/** The panes that describe the result shown, from its frame (state.js). @param {Ui} ui @param {Frame} f */
export function renderPanes(ui, f) {
  renderTotals(ui, f);
  renderCache(ui, f);
  renderMarks(ui, f);
  renderDigests(ui, f);
}

/** One state per view: what describes a result (totals, gauge,
 * prefix digests) is the current request's when "ok", visibly the last
 * valid request's when "stale", and cleared when there is none. */
export function markResult(ui, f) {
  const { totals, gauge, fill, label, digests, digestBody, digestNote } = ui;
  const s = f.state;
  const stale = s === "stale";
  if (!f.view || (s !== "ok" && !stale)) {
    totals.textContent = "";
    delete totals.dataset.value;
    gauge.className = "gauge none";
    fill.style.width = "0";
    label.textContent = s === "loading" ? "" : "no result";
    delete label.dataset.value;
    digestBody.replaceChildren();
    digestNote.textContent = s === "loading" ? "" : ": none (no request assembled)";
    digests.classList.remove("stale");
    gauge.title = "prompt_chars against max_prompt_chars";
    return;
  }
  const last = "of the last request that assembled, not the one given";
  gauge.classList.toggle("stale", stale);
  gauge.title = stale ? `prompt_chars against max_prompt_chars ${last}` : "prompt_chars against max_prompt_chars";
  label.textContent = stale ? `last valid · ${label.dataset.value ?? ""}` : (label.dataset.value ?? "");
  totals.classList.toggle("stale", stale);
  if (totals.dataset.value !== undefined) totals.textContent = stale ? `last valid · ${totals.dataset.value}` : totals.dataset.value;
  digests.classList.toggle("stale", stale);
  digestNote.textContent = stale ? ` (stale: ${last})` : "";
}

/** The line saying where the cache breakpoints are (or why none are drawn). */
export function renderMarks(ui, f) {
  const el = ui.bps;
  const m = f.marks;
  if (m === null) return void el.replaceChildren();
  const title = h(
    "b",
    {},
    f.state === "stale" ? "Anthropic cache breakpoints (of the last valid request): " : "Anthropic cache breakpoints: ",
  );
  if (m === "whole") el.replaceChildren(title, "drawn on the whole request (not step by step).");
  else if (m === "exporting") el.replaceChildren(title, "exporting…");
  else if (m.error)
    el.replaceChildren(title, "none, the export is refused: ", h("span", { class: "code" }, m.error.code), ` at ${m.error.path}`);
  else if (m.reason) el.replaceChildren(title, m.reason);
  else {
    const list = /** @type {[number, number][]} */ (m.breakpoints);
    const at = list.map(([i, b]) => (b ? `#${i} block ${b}` : `#${i}`)).join(", ");
    el.replaceChildren(title, list.length ? `${list.length} (the default policy, at most 4), after ${at}.` : "none.");
  }
}

/** The totals and the gauge. @param {Ui} ui @param {Frame} f */
export function renderTotals(ui, f) {
  const stepNote = f.step !== null ? ` · as sent after ${f.step} of ${plural(f.steps, "step")}` : "";
  ui.totals.dataset.value = `${plural(f.chars, "char")} · ${plural(f.lim, "message")}${stepNote}`;
  ui.gauge.className = "gauge";
  ui.label.dataset.value = gaugeLabel(ui, f);
  markResult(ui, f);
}

/** The gauge's fill and classes; its label. */
export function gaugeLabel(ui, f) {
  const { gauge, fill } = ui;
  const v = /** @type {View} */ (f.view);
  if (v.budget === null) {
    fill.style.width = "0";
    gauge.classList.add("none");
    return "no budget";
  }
  // The budget in integers (BigInt): exact at any size; the share used
  // in basis points, for the gauge's width.
  const b = BigInt(v.budget);
  const c = BigInt(f.chars);
  const bp = b > 0n ? Number((c * 10000n) / b) : c > 0n ? Infinity : 0;
  fill.style.width = `${Math.min(100, bp / 100)}%`;
  if (f.overflow) {
    gauge.classList.add("over");
    return `context overflow · ${fmt.format(f.chars)} / ${fmt.format(b)}`;
  }
  if (c * 10n > b * 9n) gauge.classList.add("warn");
  return `${fmt.format(f.chars)} / ${fmt.format(b)}`;
}

/** what stayed byte-identical (cacheable) */
export function renderCache(ui, f) {
  const v = /** @type {View} */ (f.view);
  const c = ui.cache;
  if (f.step !== null) {
    const k = f.step;
    if (k === 0) {
      c.replaceChildren(h("b", {}, "Step 0: "), "the prompt before any step (run, injections, goal).");
    } else {
      const prev = f.stepFrom;
      c.replaceChildren(
        h("b", {}, `Step ${k}: `),
        h("span", { class: "same" }, "run, injections and goal unchanged (same prefix digests)"),
        `; the whole prompt of step ${k - 1} (${plural(prev, "char")}) is a byte-identical prefix: cacheable. Step ${k} added ${plural(f.chars - prev, "char")}.`,
      );
    }
    return;
  }
  if (!v.sameDigests) {
    c.replaceChildren();
    return;
  }
  const parts = [h("b", {}, "Since the previous result: ")];
  for (const [k, name] of /** @type {const} */ ([
    ["run", "run"],
    ["injections", "injections"],
    ["goal", "goal"],
  ])) {
    parts.push(
      h(
        "span",
        { class: v.sameDigests[k] ? "same" : "changed", "data-digest-state": k },
        `${name} ${v.sameDigests[k] ? "identical" : "changed"}`,
      ),
      " · ",
    );
  }
  if (v.changedFrom < 0) parts.push("every message byte-identical.");
  else parts.push(`messages before #${v.changedFrom} byte-identical (${plural(f.sameChars, "char")} cacheable).`);
  c.replaceChildren(...parts);
}

export function renderDigests(ui, f) {
  const v = /** @type {View} */ (f.view);
  ui.digestBody.replaceChildren(
    ...["run", "injections", "goal"].map((k) =>
      h(
        "tr",
        {},
        h("td", {}, k),
        h("td", { class: "d", "data-digest": k }, v.prefix_digests[k]),
        h("td", {}, v.sameDigests ? (v.sameDigests[k] ? "unchanged" : "changed") : ""),
      ),
    ),
  );
}

export function renderError(pv) {
  const e = pv.lastError;
  const panel = pv.ui.error;
  if (!e) {
    panel.hidden = true;
    return;
  }
  const parts = [
    h("div", {}, h("span", { class: "code" }, e.code), e.path ? " at " : "", e.path ? h("span", { class: "path" }, e.path) : ""),
    h("div", { class: "message" }, e.message),
  ];
  const tpl = e.template;
  if (tpl) {
    const cps = [...tpl.text];
    const offset = tpl.offset;
    const before = cps.slice(0, offset).join("");
    const at = cps[offset];
    const after = cps.slice(offset + 1).join("");
    const line = before.split("\n").length;
    const column = [...before.slice(before.lastIndexOf("\n") + 1)].length + 1;
    const mark =
      at === undefined
        ? h("mark", { class: "end", "data-offset": offset, title: "end of the template" }, "\u2038")
        : h("mark", { "data-offset": offset }, at === "\n" ? "\u21b5\n" : at);
    parts.push(
      h("div", { class: "template", "data-template": "" }, before, mark, after),
      h(
        "div",
        { class: "column", "data-column": column, "data-line": line },
        `line ${line}, column ${column} (code-point offset ${offset})`,
      ),
    );
  }
  if (e.location) {
    const b = h(
      "button",
      { type: "button", class: "locate" },
      e.syntax ? "Show the syntax error in the editor" : `Show ${e.path || "the request"} in the editor`,
    );
    b.addEventListener("click", () => pv.emit("polyloop-locate", { ...e.location, code: e.code, path: e.path }));
    parts.push(h("div", {}, b));
  }
  panel.replaceChildren(...parts);
  panel.hidden = false;
}
