// `make dist` (js.mk, dist.js.run): finishes the staging copy of the package
// before `npm pack`. Stamps package.json's version from VERSION (the one
// place of the version), points Node's entry at src/node.bundle.js (the
// esbuild bundle of src/node.js that js.mk has just written), and writes
// THIRD-PARTY-LICENSES with the licence of each dependency the bundle
// carries.
//
// Usage: node scripts/stage.mjs STAGE_DIR VERSION_FILE NODE_MODULES_DIR

import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [stage, versionFile, nodeModules] = process.argv.slice(2);
const pkgPath = join(stage, "package.json");
const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
pkg.version = readFileSync(versionFile, "utf8").trim();

const BUNDLE = "./src/node.bundle.js";
const bundle = readFileSync(join(stage, BUNDLE), "utf8");
if (pkg.exports?.["."]?.node !== "./src/node.js")
  throw new Error(`package.json: exports["."].node is ${pkg.exports?.["."]?.node}, not ./src/node.js`);
pkg.exports["."].node = BUNDLE;

// The dependencies whose code the bundle holds (esbuild marks each module it
// takes in with a comment naming its path under node_modules).
const carried = Object.keys(pkg.dependencies ?? {}).filter((d) => bundle.includes(`// node_modules/${d}/`));
if (carried.length === 0) throw new Error("the bundle carries no dependency: expected the WASI shim and msgpack");
const parts = [
  "@polyloop/assembly's Node entry, src/node.bundle.js, carries the code of these packages",
  "(the versions of the package-lock.json it was built from), under their licences:",
  "",
];
for (const d of carried) {
  const dir = join(nodeModules, d);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const files = readdirSync(dir)
    .filter((f) => /^(licen[sc]e|copying)/i.test(f))
    .sort();
  if (files.length === 0) throw new Error(`${d}: no licence file in ${dir}`);
  parts.push("=".repeat(78), `${d} ${meta.version} (${meta.license})`, "=".repeat(78));
  for (const f of files) parts.push(`--- ${f}`, readFileSync(join(dir, f), "utf8").trimEnd(), "");
}
writeFileSync(join(stage, "THIRD-PARTY-LICENSES"), parts.join("\n") + "\n");
if (!pkg.files.includes("THIRD-PARTY-LICENSES")) throw new Error("package.json: files does not list THIRD-PARTY-LICENSES");
// The scripts name files the tarball does not carry (test/, bench/, scripts/): the packed
// package.json has none; js.mk runs the prepack check on the stage itself.
delete pkg.scripts;
writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + "\n");
if (!existsSync(join(stage, "LICENSE"))) throw new Error("LICENSE is missing from the stage");
console.log(
  `staged ${pkg.name} ${pkg.version}: Node entry ${BUNDLE} (${(bundle.length / 1024).toFixed(0)} KiB, carries ${carried.join(", ")})`,
);
