/**
 * The Assembler: the binding's API, each method a facade that forwards to one generic call by its row of the contract table (consts.js
 * `CALLS`, generated from core/abi; wasm/README.md "ABI"): the crossing (src/crossing.js) packs the request, runs it on an instance
 * (src/instance.js) and decodes the answer by its shape. Every error, those only the host saw included, is the core's answer (its `error` call, docs/SPEC.md §7.10).
 * @module
 */
import { usageValue } from "./encode.js";
import { InstancePool, poolOptions } from "./instance.js";
import { CALL, Crossing } from "./crossing.js";
import { Prompt, promptForm } from "./prompt.js";
import { CacheRun } from "./cache-run.js";
import * as consts from "./consts.js";

/** What assemble(object) calls: the answer names the request's texts (docs/SPEC.md §7.11). */
const ASSEMBLE_OBJECT = CALL.assemble_shared ?? CALL.assemble;

/** Assembles prompts (index.d.ts); `await loadAssembler()` makes one. */
export class Assembler {
  constructor(module, options = {}) {
    const o = poolOptions(options);
    this.module = module;
    this.options = Object.freeze(o);
    /** @private */
    this.pool = new InstancePool(module, o.maxInstances, o.recycleAboveBytes);
    /** @private The way into the module (src/crossing.js), over the pool. */
    this.crossing = new Crossing(this.pool);
  }

  /** @private Prepares the first instance asynchronously. */
  async warm() {
    await this.pool.warm();
    return this;
  }

  get instancesCreated() {
    return this.pool.created;
  }

  /** The generic call (index.d.ts). @param {string} name @param {...unknown} args @returns {any} */
  call(name, ...args) {
    const row = CALL[name];
    if (row === undefined || row.answer === "batch" || row.answer === "named") {
      const names = consts.CALLS.filter((c) => c.answer !== "batch" && c.answer !== "named").map((c) => c.name);
      throw new TypeError(`the module has no call ${JSON.stringify(name)} to make this way; the calls are ${names.join(", ")}`);
    }
    if (row.params.length === 0) return this.crossing.send({ call: row, request: args[0], asIs: true });
    return this.crossing.send({ call: row, request: Object.fromEntries(row.params.map((p, i) => [p, args[i]])) });
  }

  assembleBytes(request) {
    if (!(request instanceof Uint8Array)) {
      throw new TypeError("assembleBytes takes a Uint8Array of msgpack request bytes; use assemble() for objects");
    }
    return this.crossing.send({ call: CALL.assemble, request, read: (r) => r.slice(), asIs: true });
  }

  assemble(request) {
    return this.crossing.send({ call: ASSEMBLE_OBJECT, request });
  }

  assembleJSON(text) {
    if (typeof text !== "string" && !(text instanceof Uint8Array)) {
      throw new TypeError("assembleJSON takes the JSON text of one request, as a string or a Uint8Array of UTF-8");
    }
    return this.call("assemble_json", text);
  }

  validateTemplate(template) {
    this.assemble({ observation_template: template });
  }

  compare(a, b) {
    return this.call("compare", side(a), side(b));
  }

  cacheReport(requests, usage) {
    // Each usage as the core reads it: JSON text parsed, a class instance through toJSON() (usageValue).
    const given = Array.isArray(usage) ? Array.from(usage, (u, i) => usageValue(u, `usage[${i}]`)) : usage;
    return this.call("cache_report", Array.isArray(requests) ? requests.map(side) : side(requests), given);
  }

  cacheRun() {
    return new CacheRun(this);
  }

  export(request, provider, options) {
    return this.call("export", side(request), provider, options);
  }

  prompt(request) {
    const response = this.crossing.send({ call: CALL.prompt_start, request });
    return new Prompt({ assembler: this, crossing: this.crossing, request, response });
  }
}

/** A request, or a {@link Prompt} as its prompt form (docs/SPEC.md §7.14): its messages now, a snapshot. @param {unknown} x */
const side = (x) => (x instanceof Prompt ? promptForm(x) : x);
