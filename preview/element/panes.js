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
import { overflowAt, prefixChars, shownMarks } from "./state.js";

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

/** */
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
  renderMarks(pv);
  // "Since the previous result" describes a result: none while rejected.
  pv.ui.cache.hidden = s !== "ok";
  markResult(pv, s);
}

/** One state per view: what describes a result (totals, gauge,
 * prefix digests) is the current request's when "ok", visibly the last
 * valid request's when "stale", and cleared when there is none. */
export function markResult(pv, s) {
  const { totals, gauge, fill, label, digests, digestBody, digestNote } = pv.ui;
  const stale = s === "stale";
  if (!pv.view || (s !== "ok" && !stale)) {
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
export function renderMarks(pv) {
  const el = pv.ui.bps;
  const m = shownMarks(pv);
  if (!pv._cacheBreakpoints || !pv.view) return void el.replaceChildren();
  const title = h(
    "b",
    {},
    pv.state === "stale" ? "Anthropic cache breakpoints (of the last valid request): " : "Anthropic cache breakpoints: ",
  );
  if (pv._step !== null || pv._trajectory) el.replaceChildren(title, "drawn on the whole request (not step by step).");
  else if (!m) el.replaceChildren(title, "exporting…");
  else if (m.error)
    el.replaceChildren(title, "none, the export is refused: ", h("span", { class: "code" }, m.error.code), ` at ${m.error.path}`);
  else if (m.reason) el.replaceChildren(title, m.reason);
  else {
    const list = /** @type {[number, number][]} */ (m.breakpoints);
    const at = list.map(([i, b]) => (b ? `#${i} block ${b}` : `#${i}`)).join(", ");
    el.replaceChildren(title, list.length ? `${list.length} (the default policy, at most 4), after ${at}.` : "none.");
  }
}

/** */
export function renderTotals(pv, lim) {
  const v = /** @type {View} */ (pv.view);
  const chars = prefixChars(pv, lim);
  const t = pv.trajectoryInfo;
  const stepNote = pv._step !== null && t ? ` · as sent after ${Math.min(pv._step, t.steps)} of ${plural(t.steps, "step")}` : "";
  pv.ui.totals.dataset.value = `${plural(chars, "char")} · ${plural(lim, "message")}${stepNote}`;
  pv.ui.gauge.className = "gauge";
  showLabel(pv, gaugeLabel(pv, v, chars, lim));
}

/** Shows the totals and the gauge's label (marked when stale). */
export function showLabel(pv, text) {
  pv.ui.label.dataset.value = text;
  markResult(pv, pv.state);
}

/** The gauge's fill and classes; its label. */
export function gaugeLabel(pv, v, chars, lim) {
  const { gauge, fill } = pv.ui;
  if (v.budget === null) {
    fill.style.width = "0";
    gauge.classList.add("none");
    return "no budget";
  }
  // The budget in integers (BigInt): exact at any size; the share used
  // in basis points, for the gauge's width.
  const b = BigInt(v.budget);
  const c = BigInt(chars);
  const bp = b > 0n ? Number((c * 10000n) / b) : c > 0n ? Infinity : 0;
  fill.style.width = `${Math.min(100, bp / 100)}%`;
  if (overflowAt(pv, lim)) {
    gauge.classList.add("over");
    return `context overflow · ${fmt.format(chars)} / ${fmt.format(b)}`;
  }
  if (c * 10n > b * 9n) gauge.classList.add("warn");
  return `${fmt.format(chars)} / ${fmt.format(b)}`;
}

/** what stayed byte-identical (cacheable) */
export function renderCache(pv, lim) {
  const v = /** @type {View} */ (pv.view);
  const c = pv.ui.cache;
  const t = pv.trajectoryInfo;
  if (pv._step !== null && t) {
    const k = Math.min(pv._step, t.steps);
    if (k === 0) {
      c.replaceChildren(h("b", {}, "Step 0: "), "the prompt before any step (run, injections, goal).");
    } else {
      const prev = prefixChars(pv, t.stepStart[k - 1]);
      c.replaceChildren(
        h("b", {}, `Step ${k}: `),
        h("span", { class: "same" }, "run, injections and goal unchanged (same prefix digests)"),
        `; the whole prompt of step ${k - 1} (${plural(prev, "char")}) is a byte-identical prefix: cacheable. Step ${k} added ${plural(prefixChars(pv, lim) - prev, "char")}.`,
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
  else parts.push(`messages before #${v.changedFrom} byte-identical (${plural(prefixChars(pv, v.changedFrom), "char")} cacheable).`);
  c.replaceChildren(...parts);
}

/** */
export function renderDigests(pv) {
  const v = /** @type {View} */ (pv.view);
  pv.ui.digestBody.replaceChildren(
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

/** */
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
