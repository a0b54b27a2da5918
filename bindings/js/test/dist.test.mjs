// The npm tarball as users install it (package, install, types), run by
// `make test.js.dist` with POLYLOOP_DIST_TARBALL set to dist/*.tgz:
// - its contents (module, LICENSE, README, screenshot; no tests);
// - installed into a new npm project, Node's entry is the bundle
//   (src/node.bundle.js, with THIRD-PARTY-LICENSES), which answers every
//   shared vector byte for byte (assembleBytes, and assemble where the
//   request has a JavaScript form), with the version of VERSION and the
//   exports of src/node.js;
// - a user's TypeScript file compiles with --strict against its types in a
//   Node-only and in a browser project;
// - a minimal browser app importing @polyloop/assembly, bundled with esbuild
//   and with Vite exactly as the README says, loads the module and assembles
//   in Chromium;
// - packing the package without the module fails at pack time, naming make dist.

import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO } from "./common.mjs";
import { tsc } from "./tsc.mjs";
import { serve, withPage } from "./chromium.mjs";

const TARBALL = process.env.POLYLOOP_DIST_TARBALL;
const skip = !TARBALL && "POLYLOOP_DIST_TARBALL is not set (make test.js.dist builds and sets it)";
const skipBrowser = skip || (process.env.POLYLOOP_SKIP_BROWSER && "POLYLOOP_SKIP_BROWSER is set");
const HERE = fileURLToPath(new URL(".", import.meta.url));
const PKG_DIR = fileURLToPath(new URL("..", import.meta.url));

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim(), stdout: r.stdout ?? "" };
}

/** A new npm project with the tarball installed (once per test file). */
let project;
function installed() {
  if (project) return project;
  project = mkdtempSync(join(tmpdir(), "polyloop-npm-"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "user-app", version: "1.0.0", private: true, type: "module" }, null, 2),
  );
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", TARBALL], project);
  assert.equal(r.status, 0, `npm install of the tarball failed:\n${r.out}`);
  return project;
}

test("the tarball holds the module, LICENSE, README and screenshot, and no tests", { skip }, () => {
  const r = run("tar", ["tzf", TARBALL], HERE);
  assert.equal(r.status, 0, r.out);
  const files = r.stdout.trim().split("\n").sort();
  for (const f of [
    "package/assembly.wasm",
    "package/LICENSE",
    "package/README.md",
    "package/docs/preview.png",
    "package/package.json",
    "package/src/index.d.ts",
    "package/src/node.js",
    "package/src/node.bundle.js",
    "package/THIRD-PARTY-LICENSES",
    "package/src/browser.js",
    "package/src/version.js",
  ]) {
    assert.ok(files.includes(f), `${f} is not in the tarball: ${files.join(", ")}`);
  }
  assert.ok(
    !files.some((f) => ["test/", "node_modules/", "scripts/", "preview/"].some((d) => f.startsWith(`package/${d}`))),
    files.join(", "),
  );
  const pkg = JSON.parse(run("tar", ["xzfO", TARBALL, "package/package.json"], HERE).stdout);
  assert.equal(pkg.version, readFileSync(`${REPO}VERSION`, "utf8").trim());
  assert.equal(pkg.license, "Apache-2.0");
  // The preview is its own package on this one's API (preview/ of the repository): not exported here.
  assert.deepEqual(Object.keys(pkg.exports).sort(), [".", "./assembly.wasm", "./package.json"]);
  assert.equal(pkg.dependencies["@tanstack/virtual-core"], undefined);
  assert.equal(pkg.scripts, undefined, "the packed package.json names no script: their files are not in the tarball");
  assert.equal(pkg.repository.url, "git+https://github.com/polyloop/assembly.git");
  assert.match(pkg.homepage, /^https:\/\/github\.com\/polyloop\/assembly/);
  assert.equal(pkg.exports["."].node, "./src/node.bundle.js", "Node's entry in the package is the bundle");
  const licences = run("tar", ["xzfO", TARBALL, "package/THIRD-PARTY-LICENSES"], HERE).stdout;
  for (const d of ["@bjorn3/browser_wasi_shim", "@msgpack/msgpack"]) {
    const { version } = JSON.parse(readFileSync(`${PKG_DIR}node_modules/${d}/package.json`, "utf8"));
    assert.ok(licences.includes(`${d} ${version} (`), `THIRD-PARTY-LICENSES does not name ${d} ${version}, which the bundle carries`);
  }
  const readme = run("tar", ["xzfO", TARBALL, "package/README.md"], HERE).stdout;
  for (const m of readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)) {
    assert.ok(/^https:\/\//.test(m[1]) || files.includes(`package/${m[1]}`), `the README shows ${m[1]}, which is not in the package`);
  }
  assert.doesNotMatch(readme, /\.\.\/shared|make js\.wasm/, "the package README is written for people who install it");
});

test("installed in a new npm project: every shared vector, byte for byte, and the version", { skip, timeout: 300_000 }, async (t) => {
  const dir = installed();
  // Node resolves the package to its bundled entry (src/node.bundle.js);
  // every vector goes through assembleBytes and, where the request has a
  // JavaScript form (test/jsvalue.mjs, the Node suite's reader), through
  // assemble too, which runs the bundled msgpack encoder and the binding's
  // decoder.
  writeFileSync(
    join(dir, "vectors.mjs"),
    `import { readFileSync, readdirSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import * as pkg from "@polyloop/assembly";
import { requestToJs, Unrepresentable } from ${JSON.stringify(new URL("jsvalue.mjs", import.meta.url).href)};
const { loadAssembler, version, moduleSha256, AssemblyError } = pkg;
const dir = process.argv[2];
const asm = await loadAssembler();
let n = 0, objects = 0, bad = [];
for (const f of readdirSync(dir).filter((x) => x.endsWith(".json"))) {
  for (const c of JSON.parse(readFileSync(dir + "/" + f, "utf8")).cases) {
    const req = new Uint8Array(Buffer.from(c.request, "base64"));
    const got = Buffer.from(asm.assembleBytes(req)).toString("base64");
    if (c.response !== undefined && got !== c.response) bad.push(f + "/" + c.name);
    n++;
    let js;
    try { js = requestToJs(req); } catch (e) { if (e instanceof Unrepresentable) continue; throw e; }
    objects++;
    if (c.response !== undefined) {
      if (!isDeepStrictEqual(asm.assemble(js), requestToJs(new Uint8Array(Buffer.from(c.response, "base64"))))) bad.push(f + "/" + c.name + " (assemble)");
    } else {
      try { asm.assemble(js); bad.push(f + "/" + c.name + " (assemble: no error)"); }
      catch (e) { if (!(e instanceof AssemblyError) || e.code !== c.error.code || e.path !== c.error.path || e.offset !== c.error.offset) bad.push(f + "/" + c.name + " (assemble: " + e.code + " at " + e.path + ")"); }
    }
  }
}
let code;
try { asm.assemble({ observation_template: "{" }); } catch (e) { code = e instanceof AssemblyError && e.code; }
console.log(JSON.stringify({ n, objects, bad, version, moduleSha256, code, from: import.meta.resolve("@polyloop/assembly"), names: Object.keys(pkg).sort() }));
`,
  );
  const r = run(process.execPath, ["vectors.mjs", `${REPO}testdata/vectors`], dir);
  assert.equal(r.status, 0, r.out);
  const out = JSON.parse(r.stdout);
  assert.ok(out.n > 100, `only ${out.n} vectors`);
  assert.ok(out.objects > out.n / 2, `only ${out.objects} of ${out.n} vectors went through assemble`);
  assert.deepEqual(out.bad, []);
  assert.equal(out.version, readFileSync(`${REPO}VERSION`, "utf8").trim());
  assert.match(out.moduleSha256, /^[0-9a-f]{64}$/);
  assert.equal(out.code, "invalid_template");
  assert.ok(out.from.includes("/node_modules/@polyloop/assembly/"), `resolved from ${out.from}, not the installed package`);
  assert.ok(out.from.endsWith("/src/node.bundle.js"), `Node resolved ${out.from}, not the bundled entry`);
  const source = await import(new URL("../src/node.js", import.meta.url).href);
  assert.deepEqual(out.names, Object.keys(source).sort(), "the bundle exports what src/node.js exports");
  t.diagnostic(`${out.n} vectors through the installed tarball's bundled entry, ${out.objects} of them through assemble too`);
});

test("the installed package's types: a user's file compiles with --strict in a Node-only and a browser project", { skip }, () => {
  const dir = installed();
  cpSync(join(HERE, "types/user.ts"), join(dir, "types/user.ts"));
  const typeRoots = [join(PKG_DIR, "node_modules/@types")];
  const base = { strict: true, noEmit: true, target: "es2022", skipLibCheck: false, typeRoots };
  const configs = {
    node: { ...base, lib: ["es2022"], types: ["node"], module: "nodenext", moduleResolution: "nodenext" },
    browser: { ...base, lib: ["es2022", "dom"], types: [], module: "esnext", moduleResolution: "bundler" },
  };
  for (const [kind, compilerOptions] of Object.entries(configs)) {
    mkdirSync(join(dir, `types/${kind}`), { recursive: true });
    writeFileSync(join(dir, `types/${kind}/tsconfig.json`), JSON.stringify({ compilerOptions, files: ["../user.ts"] }, null, 2));
    const r = tsc(join(dir, `types/${kind}`));
    assert.equal(r.status, 0, `${kind} project:\n${r.output}`);
  }
});

test("packing without the module fails at pack time and names make dist", { skip: false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "polyloop-pack-"));
  try {
    for (const f of ["package.json", "README.md", "src", "scripts"]) cpSync(join(PKG_DIR, f), join(dir, f), { recursive: true });
    rmSync(join(dir, "src/version.js"), { force: true });
    const r = run("npm", ["pack", "--dry-run", "--loglevel=error"], dir);
    assert.notEqual(r.status, 0, `npm pack succeeded without the module:\n${r.out}`);
    assert.match(r.out, /make dist/);
    assert.match(r.out, /assembly\.wasm is missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The app both bundlers build: the README's bundler example. */
const APP_MAIN = (importWasm) => `import { loadAssembler } from "@polyloop/assembly";
${importWasm}
const asm = await loadAssembler(${importWasm ? "{ url: new URL(wasmUrl, import.meta.url) }" : ""});
const r = asm.assemble({
  observation_template: "Observation: {observation}",
  steps: [{ raw_output: "ls", observation: "\\uFEFFa.txt b.txt" }],
});
document.body.dataset.result = JSON.stringify(r);
`;
const INDEX = (src) =>
  `<!doctype html><meta charset="utf-8"><title>app</title><link rel="icon" href="data:,"><body><script type="module" src="${src}"></script></body>`;

/** Loads the built app in Chromium and returns what it assembled. */
function runInChromium(url) {
  return withPage(url, async (page) => {
    await page.waitForFunction(() => document.body?.dataset.result, null, { timeout: 60_000 });
    return JSON.parse(/** @type {string} */ (await page.evaluate(() => document.body.dataset.result)));
  });
}

function checkResult(r) {
  assert.equal(r.ok, true);
  assert.deepEqual(
    r.messages.map((m) => m.content[0].text),
    ["ls", "Observation: \uFEFFa.txt b.txt"],
  );
  assert.equal(r.message_chars[1], 25);
}

test("esbuild: the README's steps bundle an app that assembles in Chromium", { skip: skipBrowser, timeout: 180_000 }, async () => {
  const dir = installed();
  const app = join(dir, "esbuild-app");
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, "main.js"), APP_MAIN('import wasmUrl from "@polyloop/assembly/assembly.wasm";'));
  writeFileSync(join(app, "index.html"), INDEX("./out/main.js"));
  // The README's command, as written there.
  const r = run(
    join(PKG_DIR, "node_modules/.bin/esbuild"),
    ["main.js", "--bundle", "--format=esm", "--loader:.wasm=file", "--outdir=out"],
    app,
  );
  assert.equal(r.status, 0, r.out);
  const server = await serve(app);
  try {
    checkResult(await runInChromium(server.url));
  } finally {
    server.close();
  }
});

test("Vite: the README's steps build an app that assembles in Chromium", { skip: skipBrowser, timeout: 180_000 }, async () => {
  const dir = installed();
  const app = join(dir, "vite-app");
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, "main.js"), APP_MAIN(""));
  writeFileSync(join(app, "index.html"), INDEX("./main.js"));
  // The README's command, as written there: no configuration.
  const r = run(join(PKG_DIR, "node_modules/.bin/vite"), ["build"], app);
  assert.equal(r.status, 0, r.out);
  const server = await serve(join(app, "dist"));
  try {
    checkResult(await runInChromium(server.url));
  } finally {
    server.close();
  }
});

test.after(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});
