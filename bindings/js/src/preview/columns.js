/**
 * The prompt view's reading of an ok response (the core's canonical msgpack,
 * docs/SPEC.md §6) into columns, without decoding the message texts: each
 * text block stays UTF-8 inside the response bytes, known by its byte range,
 * and the page decodes only the blocks it shows. So a 16 MB response costs
 * the worker a walk over its headers and the page a zero-copy transfer,
 * instead of 30,000 decoded strings cloned between threads.
 *
 * Anything but the response's own shape (an error response, an unknown key,
 * a type that does not belong) gives null: the caller then reads the bytes
 * with the binding's general decoder.
 *
 * @module
 */

const td = new TextDecoder();

class Shape extends Error {}

/**
 * @typedef {object} Columns
 * @property {Uint8Array} bytes the response bytes (texts are ranges of them)
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
 */

/**
 * @param {Uint8Array} bytes
 * @returns {Columns | null}
 */
export function readColumns(bytes) {
  try {
    return read(bytes);
  } catch (e) {
    if (e instanceof Shape || e instanceof RangeError) return null;
    throw e;
  }
}

/** @param {Uint8Array} b */
function read(b) {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  const mapLen = () => {
    const t = b[i++];
    if (t >= 0x80 && t <= 0x8f) return t & 0x0f;
    if (t === 0xde) return ((i += 2), dv.getUint16(i - 2));
    if (t === 0xdf) return ((i += 4), dv.getUint32(i - 4));
    throw new Shape();
  };
  const arrLen = () => {
    const t = b[i++];
    if (t >= 0x90 && t <= 0x9f) return t & 0x0f;
    if (t === 0xdc) return ((i += 2), dv.getUint16(i - 2));
    if (t === 0xdd) return ((i += 4), dv.getUint32(i - 4));
    throw new Shape();
  };
  /** @returns {number} the string's length; i is left at its first byte */
  const strLen = () => {
    const t = b[i++];
    if (t >= 0xa0 && t <= 0xbf) return t & 0x1f;
    if (t === 0xd9) return b[i++];
    if (t === 0xda) return ((i += 2), dv.getUint16(i - 2));
    if (t === 0xdb) return ((i += 4), dv.getUint32(i - 4));
    throw new Shape();
  };
  // Keys, roles, channels, digests: short and mostly ASCII, read without a
  // TextDecoder call each (which costs more than the string).
  const str = () => {
    const n = strLen();
    if (i + n > b.length) throw new Shape();
    if (n <= 64) {
      let out = "";
      let k = i;
      for (; k < i + n; k++) {
        const c = b[k];
        if (c >= 0x80) break;
        out += String.fromCharCode(c);
      }
      if (k === i + n) {
        i += n;
        return out;
      }
    }
    i += n;
    return td.decode(b.subarray(i - n, i));
  };
  const int = () => {
    const t = b[i++];
    if (t <= 0x7f) return t;
    if (t >= 0xe0) return t - 0x100;
    switch (t) {
      case 0xcc:
        return b[i++];
      case 0xcd:
        return ((i += 2), dv.getUint16(i - 2));
      case 0xce:
        return ((i += 4), dv.getUint32(i - 4));
      case 0xcf:
        return ((i += 8), Number(dv.getBigUint64(i - 8)));
      case 0xd0:
        return ((i += 1), dv.getInt8(i - 1));
      case 0xd1:
        return ((i += 2), dv.getInt16(i - 2));
      case 0xd2:
        return ((i += 4), dv.getInt32(i - 4));
      case 0xd3:
        return ((i += 8), Number(dv.getBigInt64(i - 8)));
      default:
        throw new Shape();
    }
  };
  const bool = () => {
    const t = b[i++];
    if (t === 0xc2) return false;
    if (t === 0xc3) return true;
    throw new Shape();
  };

  /** @type {any} */
  const out = { bytes: b, roleNames: [] };
  const roleIndex = new Map();
  let ok = false;
  for (let k = mapLen(); k > 0; k--) {
    const key = str();
    if (key === "v") int();
    else if (key === "ok") ok = bool();
    else if (key === "messages") {
      const n = arrLen();
      out.count = n;
      out.roles = new Uint16Array(n);
      out.blockStart = new Uint32Array(n + 1);
      let starts = new Uint32Array(Math.max(4, n));
      let ends = new Uint32Array(Math.max(4, n));
      let nb = 0;
      for (let m = 0; m < n; m++) {
        out.blockStart[m] = nb;
        let role = null;
        for (let f = mapLen(); f > 0; f--) {
          const fk = str();
          if (fk === "role") role = str();
          else if (fk === "content") {
            for (let c = arrLen(); c > 0; c--) {
              let start = -1;
              let end = -1;
              for (let g = mapLen(); g > 0; g--) {
                const gk = str();
                if (gk === "type") str();
                else if (gk === "text") {
                  const len = strLen();
                  start = i;
                  end = i + len;
                  if (end > b.length) throw new Shape();
                  i = end;
                } else throw new Shape();
              }
              if (start < 0) throw new Shape();
              if (nb === starts.length) {
                const s2 = new Uint32Array(nb * 2);
                s2.set(starts);
                starts = s2;
                const e2 = new Uint32Array(nb * 2);
                e2.set(ends);
                ends = e2;
              }
              starts[nb] = start;
              ends[nb] = end;
              nb++;
            }
          } else throw new Shape();
        }
        if (role === null) throw new Shape();
        let r = roleIndex.get(role);
        if (r === undefined) {
          r = out.roleNames.length;
          out.roleNames.push(role);
          roleIndex.set(role, r);
        }
        out.roles[m] = r;
      }
      out.blockStart[n] = nb;
      out.starts = starts.slice(0, nb);
      out.ends = ends.slice(0, nb);
    } else if (key === "message_chars") {
      const n = arrLen();
      out.chars = new Float64Array(n);
      for (let m = 0; m < n; m++) out.chars[m] = int();
    } else if (key === "prompt_chars") out.prompt_chars = int();
    else if (key === "context_overflow") out.context_overflow = bool();
    else if (key === "injected") {
      out.injected = [];
      for (let n = arrLen(); n > 0; n--) {
        const e = {};
        for (let f = mapLen(); f > 0; f--) {
          const fk = str();
          const t = b[i];
          e[fk] = (t >= 0xa0 && t <= 0xbf) || (t >= 0xd9 && t <= 0xdb) ? str() : int();
        }
        out.injected.push(e);
      }
    } else if (key === "prefix_digests") {
      out.prefix_digests = {};
      for (let n = mapLen(); n > 0; n--) out.prefix_digests[str()] = str();
    } else throw new Shape();
  }
  if (!ok || i !== b.length || out.count === undefined || out.chars?.length !== out.count || !out.injected || !out.prefix_digests)
    return null;
  return out;
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
