// Measures @msgpack/msgpack against msgpackr on the benchmark requests and
// response-shaped objects: encode + decode, median of N runs, and the
// binding's own encoder (@msgpack/msgpack's Encoder subclassed, see
// src/encode.js). This is the measurement behind the choice recorded in
// RATIONALE.md; run it with
//   node bench/compare-msgpack.mjs
// (msgpackr is a devDependency for this script only.)
import { Encoder, Decoder } from "@msgpack/msgpack";
import { Packr, Unpackr } from "msgpackr";
import { tinyRequest, typicalRequest, largeRequest, largeAsciiRequest, responseShaped } from "./requests.mjs";
import { RequestEncoder } from "../src/encode.js";
import { decodeResponse } from "../src/decode.js";

const enc = new Encoder();
const dec = new Decoder();
const binding = new RequestEncoder();
const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

function median(f, n) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    f();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  return t[n >> 1];
}

const rows = [];
for (const [name, make, n] of [
  ["tiny", tinyRequest, 2000],
  ["typical", typicalRequest, 300],
  ["1MB mixed", largeRequest, 40],
  ["1MB ASCII", largeAsciiRequest, 40],
]) {
  const req = make();
  const resp = responseShaped(req);
  const reqBytes = enc.encode(req);
  const respBytes = enc.encode(resp);
  for (const [lib, e, d] of [
    ["@msgpack/msgpack", (o) => enc.encode(o), (b) => dec.decode(b)],
    ["msgpackr", (o) => packr.pack(o), (b) => unpackr.unpack(b)],
    ["binding (src/encode.js)", (o) => binding.encodeShared(o), (b) => decodeResponse(b)],
  ]) {
    // warm up
    for (let i = 0; i < Math.min(n, 50); i++) {
      e(req);
      d(respBytes);
    }
    const te = median(() => e(req), n);
    const td = median(() => d(respBytes), n);
    rows.push({
      request: name,
      lib,
      reqKB: (reqBytes.length / 1024).toFixed(1),
      respKB: (respBytes.length / 1024).toFixed(1),
      "encode ms": te.toFixed(4),
      "decode ms": td.toFixed(4),
      "enc MB/s": (reqBytes.length / 1e6 / (te / 1e3)).toFixed(0),
      "dec MB/s": (respBytes.length / 1e6 / (td / 1e3)).toFixed(0),
    });
  }
}
console.table(rows);
