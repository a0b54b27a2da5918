/**
 * Turns vector request bytes into the JavaScript value a user would write for
 * the same request, when one exists: the value assemble() must then answer
 * exactly as assembleBytes() answers the bytes. Independent of any msgpack
 * library and of the binding's encoder.
 *
 * Representable: nil, bool, ints (number, or bigint beyond 2^53), floats that
 * are not integers (JavaScript would send an integral number as an int), str of
 * valid UTF-8 or of WTF-8 lone surrogates, bin (Uint8Array), ext (a Symbol,
 * which the binding sends as an opaque ext), arrays, maps (a plain object when
 * every key is a string JavaScript keeps in wire order, else a Map).
 * Not representable (throws Unrepresentable): duplicate keys, other invalid
 * UTF-8, surrogate pairs written as two 3-byte sequences, integral floats,
 * 0xc1, truncation, trailing bytes.
 *
 * @module
 */

export class Unrepresentable extends Error {}

/** A canonical array index: JavaScript lists such keys first, numerically. */
const INDEX_KEY = /^(0|[1-9][0-9]*)$/;

class Reader {
  constructor(b) {
    this.b = b;
    this.pos = 0;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  take(n) {
    if (n > this.b.length - this.pos) throw new Unrepresentable("truncated");
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  uint(n) {
    let v = 0n;
    for (const c of this.take(n)) v = (v << 8n) | BigInt(c);
    return v;
  }

  int(n) {
    return BigInt.asIntN(8 * n, this.uint(n));
  }

  static num(v) {
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }

  value() {
    const b = this.take(1)[0];
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 256;
    if (b >= 0x80 && b <= 0x8f) return this.map(b & 0x0f);
    if (b >= 0x90 && b <= 0x9f) return this.array(b & 0x0f);
    if (b >= 0xa0 && b <= 0xbf) return this.str(b & 0x1f);
    switch (b) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        return new Uint8Array(this.take(Number(this.uint(1))));
      case 0xc5:
        return new Uint8Array(this.take(Number(this.uint(2))));
      case 0xc6:
        return new Uint8Array(this.take(Number(this.uint(4))));
      case 0xc7:
        this.ext(Number(this.uint(1)));
        return Symbol("ext");
      case 0xc8:
        this.ext(Number(this.uint(2)));
        return Symbol("ext");
      case 0xc9:
        this.ext(Number(this.uint(4)));
        return Symbol("ext");
      case 0xca:
        return Reader.float(new DataView(this.take(4).slice().buffer).getFloat32(0));
      case 0xcb:
        return Reader.float(new DataView(this.take(8).slice().buffer).getFloat64(0));
      case 0xcc:
        return Reader.num(this.uint(1));
      case 0xcd:
        return Reader.num(this.uint(2));
      case 0xce:
        return Reader.num(this.uint(4));
      case 0xcf:
        return Reader.num(this.uint(8));
      case 0xd0:
        return Reader.num(this.int(1));
      case 0xd1:
        return Reader.num(this.int(2));
      case 0xd2:
        return Reader.num(this.int(4));
      case 0xd3:
        return Reader.num(this.int(8));
      case 0xd4:
        this.ext(1);
        return Symbol("ext");
      case 0xd5:
        this.ext(2);
        return Symbol("ext");
      case 0xd6:
        this.ext(4);
        return Symbol("ext");
      case 0xd7:
        this.ext(8);
        return Symbol("ext");
      case 0xd8:
        this.ext(16);
        return Symbol("ext");
      case 0xd9:
        return this.str(Number(this.uint(1)));
      case 0xda:
        return this.str(Number(this.uint(2)));
      case 0xdb:
        return this.str(Number(this.uint(4)));
      case 0xdc:
        return this.array(Number(this.uint(2)));
      case 0xdd:
        return this.array(Number(this.uint(4)));
      case 0xde:
        return this.map(Number(this.uint(2)));
      case 0xdf:
        return this.map(Number(this.uint(4)));
    }
    throw new Unrepresentable(`type byte 0x${b.toString(16)}`);
  }

  static float(x) {
    if (Number.isSafeInteger(x)) throw new Unrepresentable("an integral float (JavaScript sends an int)");
    return x;
  }

  ext(n) {
    this.take(1);
    this.take(n);
  }

  array(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.value());
    return out;
  }

  map(n) {
    const entries = [];
    for (let i = 0; i < n; i++) entries.push([this.value(), this.value()]);
    const keys = entries.map(([k]) => k);
    if (new Set(keys.map((k) => (typeof k === "string" ? "s" + k : typeof k === "number" ? "n" + k : k))).size !== keys.length) {
      throw new Unrepresentable("duplicate keys");
    }
    if (keys.every((k) => typeof k === "string" && !INDEX_KEY.test(k) && k !== "__proto__")) {
      return Object.fromEntries(entries);
    }
    return new Map(entries);
  }

  /** Decodes UTF-8, allowing a lone surrogate written as its 3-byte form. */
  str(n) {
    const b = this.take(n);
    let s = "";
    let i = 0;
    let lastWasHigh = false;
    while (i < b.length) {
      const c = b[i];
      let cp, len;
      if (c < 0x80) {
        cp = c;
        len = 1;
      } else if (c >= 0xc2 && c <= 0xdf) {
        cp = c & 0x1f;
        len = 2;
      } else if (c >= 0xe0 && c <= 0xef) {
        cp = c & 0x0f;
        len = 3;
      } else if (c >= 0xf0 && c <= 0xf4) {
        cp = c & 0x07;
        len = 4;
      } else throw new Unrepresentable("invalid UTF-8 lead byte");
      if (i + len > b.length) throw new Unrepresentable("truncated UTF-8 sequence");
      for (let j = 1; j < len; j++) {
        if ((b[i + j] & 0xc0) !== 0x80) throw new Unrepresentable("invalid UTF-8 continuation");
        cp = (cp << 6) | (b[i + j] & 0x3f);
      }
      const min = [0, 0, 0x80, 0x800, 0x10000][len];
      if (cp < min || cp > 0x10ffff) throw new Unrepresentable("overlong or out-of-range UTF-8");
      const isHigh = cp >= 0xd800 && cp <= 0xdbff;
      const isLow = cp >= 0xdc00 && cp <= 0xdfff;
      if (isLow && lastWasHigh) throw new Unrepresentable("a surrogate pair in CESU-8 form (JavaScript would join it)");
      lastWasHigh = isHigh;
      s += String.fromCodePoint(cp);
      i += len;
    }
    return s;
  }
}

/**
 * @param {Uint8Array} bytes
 * @returns {any} the JavaScript request
 * @throws {Unrepresentable}
 */
export function requestToJs(bytes) {
  if (bytes.length === 0) throw new Unrepresentable("empty input");
  const r = new Reader(bytes);
  const v = r.value();
  if (r.pos !== bytes.length) throw new Unrepresentable("trailing bytes");
  return v;
}
