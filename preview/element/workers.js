/**
 * The page's workers: one per worker and module URL, shared by every
 * `<polyloop-prompt-view>` (the module is compiled once). Each element is a
 * client of one, named by a number in every message (protocol.js); a
 * message with no `view` is for every client.
 *
 * @module
 */

import { MSG } from "./protocol.js";

/**
 * What an element hears from its worker.
 * @typedef {{message: (m: any) => void, fatal: (message: string, code: string) => void}} Client
 */

/** @type {Map<string, {worker: Worker, clients: Map<number, Client>}>} */
const workers = new Map();

/** The default worker beside this file (named in errors; the Worker itself is made from the literal form). */
const WORKER_FILE = "./worker.js";

/**
 * Joins the worker of `workerUrl` (null: the element's own, beside this
 * file) and `wasmUrl` as client `id`, starting it if no element has.
 * @param {string | null} workerUrl @param {string | undefined} wasmUrl @param {number} id @param {Client} client
 * @returns {{worker: Worker, leave: () => void}}
 */
export function joinWorker(workerUrl, wasmUrl, id, client) {
  const key = `${workerUrl ?? ""}\n${wasmUrl ?? ""}`;
  let entry = workers.get(key);
  if (!entry) {
    // The default in the form bundlers recognise (Vite emits the worker).
    const w = workerUrl
      ? new Worker(new URL(workerUrl, document.baseURI), { type: "module" })
      : new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
    // Not the literal form: a bundler would emit worker.js a second time, unbundled, for this URL (which
    // only names the worker in an error message).
    const shownUrl = workerUrl ? new URL(workerUrl, document.baseURI) : new URL(WORKER_FILE, import.meta.url);
    /** @type {Map<number, Client>} */
    const clients = new Map();
    let started = false;
    w.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === MSG.READY) started = true;
      if (m.view === undefined) for (const c of clients.values()) c.message(m);
      else clients.get(m.view)?.message(m);
    };
    w.onerror = (ev) => {
      // Before it answered, the worker did not load (most often: a bundle
      // without the element's worker.js, which esbuild does not emit).
      const [code, message] = started
        ? ["internal", `the assembly worker failed: ${ev.message ?? "unknown error"}`]
        : ["worker_failed", workerFailed(shownUrl.href, ev.message)];
      for (const c of clients.values()) c.fatal(message, code);
    };
    w.postMessage({ type: MSG.INIT, wasmUrl });
    entry = { worker: w, clients };
    workers.set(key, entry);
  }
  const joined = entry;
  joined.clients.set(id, client);
  return {
    worker: joined.worker,
    // Leaves the worker; it stops once no element uses it.
    leave() {
      joined.clients.delete(id);
      if (joined.clients.size === 0) {
        joined.worker.terminate();
        workers.delete(key);
      } else joined.worker.postMessage({ type: MSG.DROP, view: id });
    },
  };
}

/**
 * The message of `worker_failed`: the element's worker did not load.
 * @param {string} url @param {string | undefined} detail
 */
export function workerFailed(url, detail) {
  return (
    `the prompt view's worker did not start from ${url}${detail ? ` (${detail})` : ""}: serve the element's worker ` +
    `(element/worker.js of @polyloop/preview, bundled) and give its URL with the worker-url attribute or ` +
    `definePromptView(name, { workerUrl, wasmUrl }) (docs/PREVIEW.md, "Bundlers": esbuild does not emit it by itself)`
  );
}
