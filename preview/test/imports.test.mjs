// The preview is its own package on the binding's public API (issues 31,
// 43): every import of its sources (the element in element/, the page beside
// it; not these tests nor the benches) names a file of preview/ itself,
// `@polyloop/assembly` (the binding's exports), `@polyloop/preview` (its own),
// or another package — never a file of the binding's src/. The one exception is
// element/binding.js, which holds what the public API does not offer yet
// (docs/PREVIEW.md); nothing else may import around the API through it
// but the preview's own files.

import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const PREVIEW = fileURLToPath(new URL("..", import.meta.url));
/** Files allowed to import the binding's private modules until its API has what they need. */
const AROUND_THE_API = new Set(["element/binding.js"]);

/** The preview's source files, relative to preview/ (tests left out). */
function sources(dir = PREVIEW) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ["test", "bench", "node_modules"].includes(e.name) ? [] : sources(path);
    return /\.(m?js|ts)$/.test(e.name) ? [relative(PREVIEW, path).split(sep).join("/")] : [];
  });
}

/** The module specifiers a file imports: static, re-exported and dynamic. */
function specifiers(text) {
  const out = [];
  for (const m of text.matchAll(
    /^\s*(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm,
  )) {
    out.push(m[1] ?? m[2] ?? m[3]);
  }
  return out;
}

test("the preview imports only the binding's public API", () => {
  const files = sources();
  assert.ok(files.includes("element/worker.js") && files.includes("app.js"), `found ${files.join(", ")}`);
  const wrong = [];
  for (const f of files) {
    for (const s of specifiers(readFileSync(join(PREVIEW, f), "utf8"))) {
      if (s.startsWith(".")) {
        const target = resolve(dirname(join(PREVIEW, f)), s);
        if (!target.startsWith(PREVIEW) && !AROUND_THE_API.has(f)) wrong.push(`${f}: ${s}`);
      } else if (s.startsWith("@polyloop/") && s !== "@polyloop/assembly" && s !== "@polyloop/preview") {
        wrong.push(`${f}: ${s}`);
      }
    }
  }
  assert.deepEqual(wrong, [], "imports past the binding's public API");
});

test("the specifier reader sees every form of import", () => {
  const text = [
    'import { a } from "../src/a.js";',
    "import b from '../src/b.js';",
    'import "../src/c.js";',
    'export { d } from "../src/d.js";',
    'const e = await import("../src/e.js");',
    'import {\n  f,\n  g,\n} from "../src/f.js";',
  ].join("\n");
  assert.deepEqual(specifiers(text), ["../src/a.js", "../src/b.js", "../src/c.js", "../src/d.js", "../src/e.js", "../src/f.js"]);
});
