// The prompt preview: edit a request (JSON) on the left, see on the right the
// messages the very same WebAssembly module gives every other host — roles,
// segments, character counts (code points), the budget, template errors with
// their column, the prefix digests.
//
// Request data is only ever put into the page as text nodes (createTextNode,
// textContent): never innerHTML, so markup inside an observation shows up
// literally.

import { loadAssembler, AssemblyError } from "@polyloop/assembly";

/** Used when examples/react.json was not copied beside the page. */
const FALLBACK_EXAMPLE = {
  v: 1,
  run_messages: [{ role: "system", content: [{ type: "text", text: "You are a ReAct agent. Think, then call one tool." }] }],
  injections: { memory: [{ entry_id: "mem-1", content: "The user prefers metric units." }] },
  goal_messages: [{ role: "user", content: [{ type: "text", text: "How tall is the Eiffel Tower?" }] }],
  steps: [{ raw_output: "Thought: look it up.\nAction: search(\"Eiffel Tower height\")", observation: "330 m (with antennas)" }],
  observation_template: "Observation: {observation}",
  max_prompt_chars: 400,
};

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const editor = /** @type {HTMLTextAreaElement} */ ($("request"));

/**
 * Creates an element. Children are nodes or strings; strings become text
 * nodes. Attributes are set with setAttribute (class, title, data-*), never as
 * HTML.
 *
 * @param {string} tag
 * @param {Record<string, string | number | undefined>} [attrs]
 * @param {...(Node | string | null | undefined | false)} children
 */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** A text block: the exact text, with each line break marked (the mark is CSS
 * generated content, so textContent and copy-paste keep the exact text). */
function textBlock(text) {
  const pre = h("pre", { class: text === "" ? "block empty" : "block" });
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line) pre.append(document.createTextNode(line));
    if (i < lines.length - 1) pre.append(h("span", { class: "nl" }, "\n"));
  });
  return pre;
}

const fmt = new Intl.NumberFormat("en-US");
const plural = (n, one, many = one + "s") => `${fmt.format(n)} ${n === 1 ? one : many}`;

/** JSON string quoting, as the wire paths quote channel names. */
const quote = (s) => JSON.stringify(s);

/**
 * Labels every message with its segment and where it comes from in the
 * request.
 *
 * @param {any} req a request the core accepted
 * @param {any} resp its response
 */
function segmentsOf(req, resp) {
  const nRun = req.run_messages?.length ?? 0;
  const nInj = resp.injected.length;
  const nGoal = req.goal_messages?.length ?? 0;
  const perChannel = new Map();
  return resp.messages.map((m, i) => {
    if (i < nRun) return { seg: "run", where: `run_messages[${i}]` };
    if (i < nRun + nInj) {
      const inj = resp.injected[i - nRun];
      const k = perChannel.get(inj.channel) ?? 0;
      perChannel.set(inj.channel, k + 1);
      return { seg: "injection", where: `injections[${quote(inj.channel)}][${k}]`, entry: inj.entry_id };
    }
    if (i < nRun + nInj + nGoal) return { seg: "goal", where: `goal_messages[${i - nRun - nInj}]` };
    const j = i - nRun - nInj - nGoal;
    const s = Math.floor(j / 2);
    return { seg: "history", where: j % 2 === 0 ? `steps[${s}].raw_output` : `steps[${s}].observation (rendered)` };
  });
}

const SEGMENT_TITLES = { run: "Run messages", injection: "Injection slot", goal: "Goal messages", history: "History" };

/** @param {any} req @param {any} resp */
function renderMessages(req, resp) {
  const labels = segmentsOf(req, resp);
  const counts = { run: 0, injection: 0, goal: 0, history: 0 };
  for (const l of labels) counts[l.seg]++;
  const channels = new Set(resp.injected.map((x) => x.channel)).size;
  const detail = {
    run: plural(counts.run, "message"),
    injection: counts.injection ? `${plural(counts.injection, "entry", "entries")} from ${plural(channels, "channel")}, by code point` : "empty",
    goal: plural(counts.goal, "message"),
    history: plural(counts.history / 2, "step"),
  };
  const frag = document.createDocumentFragment();
  let seg = null;
  const heads = ["run", "injection", "goal", "history"];
  const head = (s) => frag.append(h("div", { class: `segment-head`, "data-segment": s }, `${SEGMENT_TITLES[s]} · ${detail[s]}`));
  resp.messages.forEach((m, i) => {
    const l = labels[i];
    if (l.seg !== seg) {
      // Heads of the segments before this one that have no message.
      for (const s of heads.slice(seg ? heads.indexOf(seg) + 1 : 0, heads.indexOf(l.seg))) head(s);
      head(l.seg);
      seg = l.seg;
    }
    frag.append(
      h(
        "article",
        { class: `msg seg-${l.seg}`, "data-index": i, "data-segment": l.seg },
        h(
          "div",
          { class: "meta" },
          h("span", { class: "role" }, m.role),
          h("span", { class: "where" }, `#${i} · ${l.where}`),
          l.entry !== undefined ? h("span", { class: "entry", title: "entry_id" }, `entry ${l.entry}`) : null,
          h("span", { class: "chars", title: "message_chars: code points" }, plural(resp.message_chars[i], "char")),
        ),
        ...m.content.map((b) => textBlock(b.text)),
      ),
    );
  });
  for (const s of heads.slice(seg ? heads.indexOf(seg) + 1 : 0)) head(s);
  $("messages").replaceChildren(frag);
}

/** @param {any} req @param {any} resp */
function renderTotals(req, resp) {
  $("total-chars").textContent = resp ? `${plural(resp.prompt_chars, "char")} · ${plural(resp.messages.length, "message")}` : "–";
  const gauge = $("gauge");
  const fill = /** @type {HTMLElement} */ (gauge.querySelector(".fill"));
  const label = /** @type {HTMLElement} */ (gauge.querySelector(".label"));
  const budget = req && typeof req === "object" ? req.max_prompt_chars : undefined;
  gauge.className = "gauge";
  if (!resp) {
    fill.style.width = "0";
    label.textContent = "–";
    gauge.classList.add("none");
  } else if (budget === null || budget === undefined) {
    fill.style.width = "0";
    label.textContent = "no budget";
    gauge.classList.add("none");
  } else {
    const b = Number(budget);
    const ratio = b > 0 ? resp.prompt_chars / b : resp.prompt_chars > 0 ? Infinity : 0;
    fill.style.width = `${Math.min(100, ratio * 100)}%`;
    if (resp.context_overflow) {
      gauge.classList.add("over");
      label.textContent = `context overflow · ${fmt.format(resp.prompt_chars)} / ${fmt.format(b)}`;
    } else {
      if (ratio > 0.9) gauge.classList.add("warn");
      label.textContent = `${fmt.format(resp.prompt_chars)} / ${fmt.format(b)}`;
    }
  }
}

/** @param {any} resp */
function renderDigests(resp) {
  const box = $("digests");
  if (!resp) {
    box.replaceChildren();
    return;
  }
  const rows = ["run", "injections", "goal"].map((k) => h("tr", {}, h("td", {}, `${k}`), h("td", { "data-digest": k }, resp.prefix_digests[k])));
  box.replaceChildren(h("div", { class: "title", title: "SHA-256 of the canonical encoding of messages up to the end of each segment" }, "Prefix digests"), h("table", {}, h("tbody", {}, ...rows)));
}

/**
 * The error panel. For a template error the template is shown with the
 * offending code point marked (the offset the core gives counts code points).
 *
 * @param {AssemblyError} e
 * @param {any} req
 */
function renderError(e, req) {
  const panel = $("error");
  const parts = [
    h("div", {}, h("span", { class: "code" }, e.code), e.path ? " at " : "", e.path ? h("span", { class: "path" }, e.path) : ""),
    h("div", { class: "message" }, e.message),
  ];
  const m = /\boffset (\d+)\b/.exec(e.message);
  const template = req && typeof req === "object" ? req.observation_template : undefined;
  if (e.code === "invalid_template" && m && typeof template === "string") {
    const offset = Number(m[1]);
    const cps = [...template];
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
      h("div", { class: "column", "data-column": column, "data-line": line }, `line ${line}, column ${column} (code-point offset ${offset})`),
    );
  }
  panel.replaceChildren(...parts);
  panel.hidden = false;
}

const state = {
  /** @type {any} */ asm: null,
  /** @type {any} */ lastResponse: null,
  /** @type {AssemblyError | null} */ lastError: null,
  renders: 0,
};

function setStatus(text, cls) {
  const s = $("status");
  s.textContent = text;
  s.className = cls ?? "";
}

/** Parses the editor and re-renders the right pane. */
function update() {
  const src = editor.value;
  const jsonError = $("json-error");
  let req;
  try {
    req = JSON.parse(src);
    jsonError.hidden = true;
  } catch (err) {
    jsonError.textContent = `JSON: ${err.message}`;
    jsonError.hidden = false;
    document.body.dataset.state = "json-error";
    finish();
    return;
  }
  try {
    const t0 = performance.now();
    const resp = state.asm.assemble(req);
    const ms = performance.now() - t0;
    state.lastResponse = resp;
    state.lastError = null;
    $("error").hidden = true;
    renderMessages(req, resp);
    renderTotals(req, resp);
    renderDigests(resp);
    setStatus(`assembled in ${ms.toFixed(1)} ms`, "ok");
    document.body.dataset.state = "ok";
  } catch (err) {
    if (!(err instanceof AssemblyError)) throw err;
    state.lastResponse = null;
    state.lastError = err;
    renderError(err, req);
    $("messages").replaceChildren();
    renderTotals(req, null);
    renderDigests(null);
    setStatus(`error: ${err.code}`, "bad");
    document.body.dataset.state = "error";
  }
  finish();
}

function finish() {
  /** @type {HTMLButtonElement} */ ($("copy")).disabled = !state.lastResponse || document.body.dataset.state !== "ok";
  state.renders++;
  document.body.dataset.renders = String(state.renders);
}

let timer = 0;
function scheduleUpdate() {
  clearTimeout(timer);
  timer = setTimeout(update, 60);
}

async function copyResponse() {
  if (!state.lastResponse) return;
  const text = JSON.stringify(state.lastResponse, null, 2);
  const button = /** @type {HTMLButtonElement} */ ($("copy"));
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = h("textarea", {});
    /** @type {HTMLTextAreaElement} */ (ta).value = text;
    document.body.append(ta);
    /** @type {HTMLTextAreaElement} */ (ta).select();
    document.execCommand("copy");
    ta.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => (button.textContent = "Copy response JSON"), 1200);
}

async function loadExample() {
  try {
    const r = await fetch("./react.json", { cache: "no-store" });
    if (r.ok) return await r.text();
  } catch {
    // fall through
  }
  return JSON.stringify(FALLBACK_EXAMPLE, null, 2);
}

async function main() {
  const [asm, example] = await Promise.all([loadAssembler(), loadExample()]);
  state.asm = asm;
  setStatus("module ready", "ok");
  editor.value = example;
  editor.addEventListener("input", scheduleUpdate);
  $("copy").addEventListener("click", copyResponse);
  $("reset").addEventListener("click", async () => {
    editor.value = await loadExample();
    update();
  });
  update();
}

/** For tests and the console: the page's assembler, its last result, and a
 * way to render now instead of after the typing debounce. */
const ready = main().catch((err) => {
  setStatus(`cannot load the module: ${err.message}`, "bad");
  document.body.dataset.state = "load-error";
  throw err;
});
Object.assign(window, {
  preview: {
    ready,
    update,
    get asm() {
      return state.asm;
    },
    get lastResponse() {
      return state.lastResponse;
    },
    get lastError() {
      return state.lastError;
    },
  },
});
