/**
 * Port of the strict msgpack reader of core/vectors_test.go: it accepts only
 * what a canonical error response may contain (maps, strs and non-negative
 * ints in their shortest form, bools) and checks the shape
 * {v: 1, ok: false, error: {code, message, path}}. Independent of any msgpack
 * library.
 *
 * @module
 */

const utf8 = new TextDecoder("utf-8", { fatal: true });

class Reader {
  /** @param {Uint8Array} b */
  constructor(b) {
    this.b = b;
    this.pos = 0;
  }

  next(n) {
    if (n < 0 || n > this.b.length - this.pos) throw new Error(`truncated at byte ${this.pos}`);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  uintN(n) {
    let v = 0n;
    for (const c of this.next(n)) v = (v << 8n) | BigInt(c);
    return v;
  }

  /** @returns {string | bigint | boolean | [string, any][]} */
  readValue() {
    const b = this.next(1)[0];
    if (b <= 0x7f) return BigInt(b);
    if (b >= 0x80 && b <= 0x8f) return this.readMap(b & 0x0f);
    if (b >= 0xa0 && b <= 0xbf) return this.readStr(b & 0x1f);
    if (b === 0xc2 || b === 0xc3) return b === 0xc3;
    if (b >= 0xcc && b <= 0xcf) {
      const size = 1 << (b - 0xcc);
      const v = this.uintN(size);
      if ((size > 1 && v < 1n << BigInt(8 * (size / 2))) || (size === 1 && v < 0x80n)) {
        throw new Error(`int ${v} not in its shortest form`);
      }
      return v;
    }
    if (b === 0xd9 || b === 0xda || b === 0xdb) {
      const size = { 0xd9: 1, 0xda: 2, 0xdb: 4 }[b];
      const n = this.uintN(size);
      if ((size === 1 && n < 32n) || (size > 1 && n < 1n << BigInt(8 * (size / 2)))) {
        throw new Error(`str header of length ${n} not in its shortest form`);
      }
      return this.readStr(Number(n));
    }
    if (b === 0xde) {
      const n = this.uintN(2);
      if (n < 16n) throw new Error(`map16 of ${n} entries`);
      return this.readMap(Number(n));
    }
    throw new Error(`unexpected type byte 0x${b.toString(16)} at ${this.pos - 1} in an error response`);
  }

  readStr(n) {
    return utf8.decode(this.next(n));
  }

  readMap(n) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const k = this.readValue();
      if (typeof k !== "string") throw new Error(`non-str map key ${k}`);
      out.push([k, this.readValue()]);
    }
    return out;
  }
}

/**
 * Checks the canonical error response shape (a fourth key `offset`, an int,
 * exactly when the code is invalid_template) and returns its fields.
 * @param {Uint8Array} bytes
 * @returns {{code: string, path: string, message: string, offset?: number}}
 */
export function decodeErrorResponse(bytes) {
  const r = new Reader(bytes);
  const top = r.readValue();
  if (r.pos !== bytes.length) throw new Error(`${bytes.length - r.pos} trailing bytes`);
  if (!Array.isArray(top) || top.length !== 3 || top[0][0] !== "v" || top[1][0] !== "ok" || top[2][0] !== "error") {
    throw new Error(`top level is not the map {v, ok, error}`);
  }
  if (top[0][1] !== 1n || top[1][1] !== false) throw new Error(`want v 1 and ok false, got v ${top[0][1]} ok ${top[1][1]}`);
  const e = top[2][1];
  if (!Array.isArray(e) || e.length < 3 || e[0][0] !== "code" || e[1][0] !== "message" || e[2][0] !== "path") {
    throw new Error("error is not the map {code, message, path[, offset]}");
  }
  for (const [k, v] of e.slice(0, 3)) if (typeof v !== "string") throw new Error(`error.${k} is not a str`);
  const out = { code: e[0][1], message: e[1][1], path: e[2][1] };
  if (out.code === "invalid_template") {
    if (e.length !== 4 || e[3][0] !== "offset" || typeof e[3][1] !== "bigint") {
      throw new Error("an invalid_template error is not the map {code, message, path, offset}");
    }
    out.offset = Number(e[3][1]);
  } else if (e.length !== 3) {
    throw new Error("error is not the map {code, message, path}");
  }
  return out;
}
