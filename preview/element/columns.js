/**
 * The prompt view's columns of an ok response: each text block stays UTF-8
 * inside the response bytes, known by its byte range, and the page decodes
 * only the blocks it shows. So a 16 MB response costs the page a zero-copy
 * transfer instead of 30,000 decoded strings cloned between threads. The
 * ranges, segments, steps and budget crossing are the core's (the module's
 * assemble_view export, docs/SPEC.md §7.8): nothing here reads msgpack.
 *
 * @module
 */

// ignoreBOM: a text that starts with U+FEFF keeps it (docs/SPEC.md §2.1: it is text, never stripped)
const td = new TextDecoder("utf-8", { ignoreBOM: true });
const te = new TextEncoder();

/**
 * @typedef {object} Columns
 * @property {Uint8Array} bytes holds the texts (block b is bytes[starts[b], ends[b]))
 * @property {Uint8Array} response the response bytes (for copying it as JSON)
 * @property {number} count messages
 * @property {string[]} roleNames
 * @property {Uint16Array} roles index into roleNames, per message
 * @property {Uint32Array} blockStart first block of message i (count + 1 entries)
 * @property {Uint32Array} starts byte where block b's text starts
 * @property {Uint32Array} ends byte where it ends
 * @property {Float64Array} chars message_chars
 * @property {number} prompt_chars
 * @property {boolean} context_overflow
 * @property {{channel: string, entry_id: string, message_index?: number}[]} injected
 * @property {{run: string, injections: string, goal: string}} prefix_digests
 * @property {[number, number, number, number]} segEnds where the run, injection, goal and history segments end
 * @property {number} steps
 * @property {Uint32Array} stepStart the first message of each step, then the count (steps + 1 entries: the core's step_start)
 * @property {string | null} budget max_prompt_chars as the core wrote it (a decimal string: exact)
 * @property {number} firstOver the first message where the running sum of message_chars exceeds the budget, -1 if none
 */

/**
 * The columns of the response `bytes` from the core's view of it.
 * @param {Uint8Array} bytes @param {any} v the view (JSON of core.View)
 * @returns {Columns}
 */
export function columnsOf(bytes, v) {
  const n = v.role.length;
  const nb = v.block_start[n];
  const starts = new Uint32Array(nb);
  const ends = new Uint32Array(nb);
  for (let b = 0; b < nb; b++) {
    starts[b] = v.texts[2 * b];
    ends[b] = v.texts[2 * b + 1];
  }
  return {
    bytes,
    response: bytes,
    count: n,
    roleNames: v.roles,
    roles: Uint16Array.from(v.role),
    blockStart: Uint32Array.from(v.block_start),
    starts,
    ends,
    chars: Float64Array.from(v.message_chars),
    prompt_chars: v.prompt_chars,
    context_overflow: v.context_overflow,
    injected: v.injected,
    prefix_digests: v.prefix_digests,
    segEnds: [v.run_end, v.injections_end, v.goal_end, n],
    steps: v.steps,
    stepStart: Uint32Array.from(v.step_start),
    budget: v.max_prompt_chars,
    firstOver: v.first_over,
  };
}

/**
 * The columns of a prompt built step by step (an AssembleResponse object),
 * its texts written into one buffer; the layout is that of `like`, the
 * columns of the same request assembled whole (the messages must be equal:
 * firstDifference says whether they are).
 * @param {any} p @param {Columns} like
 * @returns {Columns}
 */
export function columnsOfPrompt(p, like) {
  const texts = p.messages.flatMap((/** @type {any} */ m) => m.content.map((/** @type {any} */ b) => te.encode(b.text)));
  const bytes = new Uint8Array(texts.reduce((s, t) => s + t.length, 0));
  const starts = new Uint32Array(texts.length);
  const ends = new Uint32Array(texts.length);
  let at = 0;
  texts.forEach((t, b) => {
    bytes.set(t, at);
    starts[b] = at;
    ends[b] = at += t.length;
  });
  const roleNames = [...new Set(p.messages.map((/** @type {any} */ m) => m.role))];
  const blockStart = new Uint32Array(p.messages.length + 1);
  p.messages.forEach((/** @type {any} */ m, i) => (blockStart[i + 1] = blockStart[i] + m.content.length));
  return {
    ...like,
    bytes,
    count: p.messages.length,
    roleNames,
    roles: Uint16Array.from(p.messages, (/** @type {any} */ m) => roleNames.indexOf(m.role)),
    blockStart,
    starts,
    ends,
    chars: Float64Array.from(p.message_chars),
    prompt_chars: p.prompt_chars,
    context_overflow: p.context_overflow,
    injected: p.injected,
    prefix_digests: p.prefix_digests,
  };
}

/**
 * Whether block `x` of `a` and block `y` of `b` hold the same bytes.
 * @param {Columns} a @param {number} x @param {Columns} b @param {number} y
 */
export function sameBlock(a, x, b, y) {
  const n = a.ends[x] - a.starts[x];
  if (n !== b.ends[y] - b.starts[y]) return false;
  const p = a.bytes;
  const q = b.bytes;
  const po = p.byteOffset;
  const qo = q.byteOffset;
  let s = a.starts[x];
  let t = b.starts[y];
  const end = s + n;
  // Four bytes at a time where both ranges share their alignment in their
  // buffers (the unchanged prefix of two responses does: same offsets).
  if (n >= 16 && (po + s) % 4 === (qo + t) % 4) {
    while ((po + s) % 4 !== 0) if (p[s++] !== q[t++]) return false;
    const pw = words(p);
    const qw = words(q);
    const i = (po + s) >> 2;
    const j = (qo + t) >> 2;
    const m = (end - s) >> 2;
    for (let k = 0; k < m; k++) if (pw[i + k] !== qw[j + k]) return false;
    s += m << 2;
    t += m << 2;
  }
  for (; s < end; s++, t++) if (p[s] !== q[t]) return false;
  return true;
}

/** @type {WeakMap<ArrayBufferLike, Uint32Array>} */
const wordViews = new WeakMap();

/** The whole buffer of `u8` as 32-bit words (word k = bytes 4k to 4k+3). @param {Uint8Array} u8 */
function words(u8) {
  let w = wordViews.get(u8.buffer);
  if (!w) {
    w = new Uint32Array(u8.buffer, 0, u8.buffer.byteLength >> 2);
    wordViews.set(u8.buffer, w);
  }
  return w;
}

/**
 * The first message whose role or text differs between `a` and `b` (-1 when
 * they are equal).
 * @param {Columns} a @param {Columns} b
 */
export function firstDifference(a, b) {
  const n = Math.min(a.count, b.count);
  for (let m = 0; m < n; m++) {
    if (a.roleNames[a.roles[m]] !== b.roleNames[b.roles[m]]) return m;
    const k = a.blockStart[m + 1] - a.blockStart[m];
    if (k !== b.blockStart[m + 1] - b.blockStart[m]) return m;
    for (let j = 0; j < k; j++) if (!sameBlock(a, a.blockStart[m] + j, b, b.blockStart[m] + j)) return m;
  }
  return a.count === b.count ? -1 : n;
}

/** The text of block `x` (decoded on demand). @param {Columns} c @param {number} x */
export function blockText(c, x) {
  return td.decode(c.bytes.subarray(c.starts[x], c.ends[x]));
}

// ---- questions the element asks of a view (the worker's columns, as the page gets them)

/** the first message of segment s */
export function segStart(v, s) {
  return s === 0 ? 0 : v.segEnds[s - 1];
}

/** the segment of message i */
export function segOf(v, i) {
  const e = v.segEnds;
  return i < e[0] ? 0 : i < e[1] ? 1 : i < e[2] ? 2 : 3;
}

/** where message i comes from in the request */
export function where(v, i) {
  const [run, inj, goal] = v.segEnds;
  if (i < run) return `run_messages[${i}]`;
  if (i < inj) {
    const entry = v.injected[i - run];
    let k = 0;
    for (let j = run; j < i; j++) if (v.injected[j - run].channel === entry.channel) k++;
    return `injections[${JSON.stringify(entry.channel)}][${k}]`;
  }
  if (i < goal) return `goal_messages[${i - inj}]`;
  const s = stepOf(v, i);
  return i === v.stepStart[s] ? `steps[${s}].raw_output` : `steps[${s}].observation (rendered)`;
}

/** The step message i belongs to (a history message): the last
 * step starting at or before it (step_start, binary search). */
export function stepOf(v, i) {
  const st = v.stepStart;
  let lo = 0;
  let hi = st.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (st[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The texts of message `i`'s blocks of the view `v` (null: none). */
export function textsOf(v, i) {
  if (!v || i < 0 || i >= v.count) return null;
  const out = [];
  for (let b = v.blockStart[i]; b < v.blockStart[i + 1]; b++) out.push(blockText(v, b));
  return out;
}
