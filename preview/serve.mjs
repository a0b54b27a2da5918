#!/usr/bin/env node
/**
 * A static server for the prompt preview, on 127.0.0.1 only.
 *
 *   node preview/serve.mjs [--port N]      (default 8377; 0 = any free port)
 *
 * It serves /preview/ (this folder: the page; not its tests, benches or node_modules), and from the
 * binding (the package @polyloop/assembly, a dependency) /src/ (its sources) and
 * /preview/examples/ (the sample files of the repository's examples/ the page offers) and
 * /assembly.wasm (the module, as application/wasm for streaming compilation),
 * and two bundles it builds with esbuild when it starts (kept in memory, never
 * written): /preview/app.bundle.js (the page: app.js and the
 * <polyloop-prompt-view> element; the editor, CodeMirror, in a chunk under
 * /preview/chunks/ loaded in parallel) and /preview/worker.js (the element's
 * worker: the package and the module's runtime). Nothing else: no directory
 * listings, no paths outside those, and no Host but this machine's own names
 * (127.0.0.1, localhost, [::1] with the server's port: a page on another
 * name that resolves here — DNS rebinding — gets 421). Every response carries an ETag and
 * `cache-control: no-cache`, so a reload revalidates (304) and the browser
 * keeps the compiled module in its code cache.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** This package (the page and the element), served as /preview/. */
const PREVIEW = fileURLToPath(new URL(".", import.meta.url));
/** The binding's package as this package resolves it (a file: link to bindings/js in the repository). */
const BINDING = join(createRequire(import.meta.url).resolve("@polyloop/assembly/package.json"), "..");
/** The repository's sample files (examples/). */
const EXAMPLES_DIR = fileURLToPath(new URL("../examples/", import.meta.url));
/** The URL paths served: a prefix (or one file), and the folder it is read from. */
const ALLOWED = [
  ["preview/", PREVIEW],
  ["src/", join(BINDING, "src")],
  ["assembly.wasm", join(BINDING, "assembly.wasm")],
];
/** Folders of this package never served. */
const PRIVATE = ["preview/test/", "preview/bench/", "preview/node_modules/"];
/** The repository's sample files the page offers (examples/), served as
 * /preview/examples/NAME. */
export const EXAMPLES = new Set(["react.json", "trajectories.jsonl", "requests.msgpack", "compare-a.json", "compare-b.json"]);

/**
 * Bundles the page and the element's worker with esbuild (in memory).
 * `@polyloop/assembly` resolves to the binding's browser sources (its
 * `browser` export; the page's import map names the same files).
 *
 * @returns {Promise<Map<string, Uint8Array>>} URL path → bytes
 */
export async function buildPreview() {
  const { build } = await import("esbuild");
  const self = {
    name: "polyloop-self",
    setup(b) {
      b.onResolve({ filter: /^@polyloop\/assembly$/ }, () => ({ path: join(BINDING, "src", "browser.js") }));
    },
  };
  const out = await build({
    absWorkingDir: PREVIEW,
    entryPoints: { "preview/app.bundle": "app.js", "preview/worker": "element/worker.js" },
    bundle: true,
    format: "esm",
    splitting: true,
    chunkNames: "preview/chunks/[name]-[hash]",
    target: "es2022",
    minify: true,
    sourcemap: "linked",
    write: false,
    outdir: PREVIEW,
    logLevel: "error",
    plugins: [self],
  });
  const files = new Map();
  for (const f of out.outputFiles) files.set("/" + f.path.slice(PREVIEW.length).split(sep).join("/"), f.contents);
  return files;
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".map": "application/json; charset=utf-8",
};

/** A request the server cannot read (answered 400, not 500). */
class BadRequest extends Error {}

/** @param {string} urlPath */
async function resolveFile(urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    throw new BadRequest("malformed percent-encoding in the path");
  }
  let rel = decoded.replace(/^\/+/, "");
  if (rel === "") return null;
  if (rel.endsWith("/")) rel += "index.html";
  const clean = normalize(rel);
  if (clean.startsWith("..") || clean.includes(`${sep}..${sep}`)) return null;
  const posix = clean.split(sep).join("/");
  if (posix.startsWith("preview/examples/")) {
    const name = posix.slice("preview/examples/".length);
    return EXAMPLES.has(name) ? join(EXAMPLES_DIR, name) : null;
  }
  const root = ALLOWED.find(([p]) => posix === p || (p.endsWith("/") && posix.startsWith(p)));
  if (!root || PRIVATE.some((p) => posix.startsWith(p))) return null;
  const file = root[0].endsWith("/") ? join(root[1], posix.slice(root[0].length)) : root[1];
  const s = await stat(file).catch(() => null);
  if (!s) return null;
  if (s.isDirectory()) return resolveFile(`/${posix}/`);
  return file;
}

/**
 * Starts the server.
 *
 * @param {{port?: number, host?: string}} [opts]
 * @returns {Promise<{server: import("node:http").Server, url: string, close: () => Promise<void>}>}
 */
export async function startServer({ port = 8377, host = "127.0.0.1" } = {}) {
  const bundles = await buildPreview();
  /** The Host headers answered, once the port is known. @type {Set<string>} */
  const hosts = new Set();
  const server = createServer(async (req, res) => {
    try {
      if (!hosts.has((req.headers.host ?? "").toLowerCase())) {
        const [own] = hosts;
        res
          .writeHead(421, { "content-type": "text/plain; charset=utf-8" })
          .end(
            `misdirected request: this server answers only http://${own}/ and this machine's other loopback names; open the preview there\n`,
          );
        return;
      }
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/" || path === "/preview") {
        res.writeHead(302, { location: "/preview/" }).end();
        return;
      }
      const built = bundles.get(path);
      const file = built ? path : await resolveFile(path);
      if (!file || (req.method !== "GET" && req.method !== "HEAD")) {
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
        return;
      }
      const body = built ?? (await readFile(file));
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
      const headers = {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "cache-control": "no-cache",
        etag,
        "x-content-type-options": "nosniff",
      };
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, headers);
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (e) {
      if (e instanceof BadRequest) {
        res.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end(`bad request: ${e.message}\n`);
        return;
      }
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`error: ${e.message}\n`);
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const addr = /** @type {import("node:net").AddressInfo} */ (server.address());
  for (const name of [host, "127.0.0.1", "localhost", "[::1]"]) hosts.add(`${name}:${addr.port}`.toLowerCase());
  const url = `http://${host}:${addr.port}/preview/`;
  return { server, url, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf("--port");
  const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT ?? 8377);
  let started;
  try {
    started = await startServer({ port });
  } catch (e) {
    if (e.code !== "EADDRINUSE") throw e;
    console.error(`port ${port} is busy; using a free one`);
    started = await startServer({ port: 0 });
  }
  console.log(`Prompt preview: ${started.url}   (Ctrl-C to stop)`);
}
