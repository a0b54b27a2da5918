// `npm pack` / `npm publish` check (the package.json "prepack" script): the
// package must carry the module, the licence, a stamped version and Node's
// entry (src/node.bundle.js, with THIRD-PARTY-LICENSES), or the pack fails
// here (not at a user's first call). `make dist` builds them all and packs
// from a staging copy.

import { existsSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";

const fail = (what) => {
  console.error(
    `@polyloop/assembly cannot be packed: ${what}.\nBuild the package with \`make dist\` from the repository root: it builds assembly.wasm, stamps the version from VERSION and writes the tarball to dist/.`,
  );
  process.exit(1);
};

if (!existsSync("assembly.wasm")) fail("assembly.wasm is missing");
if (!existsSync("LICENSE")) fail("LICENSE is missing");
if (!existsSync("src/version.js")) fail("src/version.js (the version and the module's SHA-256) is missing");
if (!existsSync("src/node.bundle.js") || !existsSync("THIRD-PARTY-LICENSES"))
  fail("src/node.bundle.js (Node's entry) or THIRD-PARTY-LICENSES is missing");
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const { version, moduleSha256 } = await import(new URL(`file://${process.cwd()}/src/version.js`).href);
if (pkg.version !== version) fail(`package.json says version ${pkg.version}, the module's build says ${version}`);
const sha = createHash("sha256").update(readFileSync("assembly.wasm")).digest("hex");
if (sha !== moduleSha256)
  fail(`assembly.wasm (sha256 ${sha.slice(0, 12)}…) is not the module src/version.js was written for (${moduleSha256.slice(0, 12)}…)`);
